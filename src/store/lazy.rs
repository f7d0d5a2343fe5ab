//! A JSON object file edited where it changes and left as bytes everywhere else, so a large
//! `.claude.json` (tens of megabytes of `projects`) is never held as a tree.
//!
//! [`Doc::parse`] checks the whole text and splits the top-level object into its members, each
//! still the slice of text it was read from. A member is parsed only when [`Obj`]'s methods
//! read or change it: [`Obj::object`] opens an object one level (its members stay slices),
//! [`Obj::value_mut`] parses one member into a [`Value`]. [`Doc::render`] writes the document
//! in the `JSON.stringify(value, null, 2)` layout ([`crate::store::format::render`]): a member
//! nobody touched is copied as it was when the file was already in that layout (its slice is
//! then exactly what rendering it would give), and otherwise re-laid out a level at a time, so
//! no more of it is parsed at once than one scalar. Duplicate keys keep the first one's place
//! and the last one's value, as `JSON.parse` and a parse into [`crate::store::format::Entry`]
//! do, in every object opened; an object nobody opened keeps its bytes.
//!
//! Memory: the file's text and the members opened or parsed; rendered into a writer
//! ([`Doc::render_to`]), the result is never held.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::io;
use std::marker::PhantomData;

use anyhow::{Context, Result, bail};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::store::format::render;

/// How deep [`Doc::render`] lays out nested arrays and objects again (serde_json's own limit
/// for a parse); a deeper file is refused rather than risking the stack.
pub const MAX_DEPTH: usize = 128;

/// Where [`Doc::render_to`] puts the text, a piece at a time.
pub trait Sink {
    /// Takes the next piece.
    ///
    /// # Errors
    /// The writer's.
    fn put(&mut self, text: &str) -> io::Result<()>;
}

impl Sink for String {
    fn put(&mut self, text: &str) -> io::Result<()> {
        self.push_str(text);
        Ok(())
    }
}

/// Any writer as a [`Sink`].
pub struct Writing<W>(pub W);

impl<W: io::Write> Sink for Writing<W> {
    fn put(&mut self, text: &str) -> io::Result<()> {
        self.0.write_all(text.as_bytes())
    }
}

/// One member's value.
#[derive(Debug)]
enum Node<'a> {
    /// Untouched: the text it was read from.
    Raw(&'a RawValue),
    /// An object opened one level (boxed: most members are slices, and a `projects` of
    /// hundreds of thousands of them is held at once).
    Obj(Box<Obj<'a>>),
    /// Parsed (to be read or changed), or new.
    Value(Value),
}

/// A JSON object whose members are parsed only when read or changed (see the module docs).
#[derive(Debug, Default)]
pub struct Obj<'a> {
    /// Each key is a slice of the text unless it holds an escape (or was added).
    members: Vec<(Cow<'a, str>, Node<'a>)>,
    index: HashMap<Cow<'a, str>, usize>,
    /// A key came more than once in the text.
    duplicates: bool,
}

/// A whole file's object over its text.
#[derive(Debug, Default)]
pub struct Doc<'a> {
    root: Obj<'a>,
}

/// An object's key, a slice of the text when it holds no escape.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Text<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(Text(PhantomData))
    }
}

/// An object opened one level, read straight into an [`Obj`] (its members slices of the text).
struct Opened<'a>(Obj<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for Opened<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Members<'a> {
            type Value = Opened<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Opened<'a>, M::Error> {
                let mut obj = Obj::default();
                while let Some((Key(k), v)) = m.next_entry::<Key<'de>, &'de RawValue>()? {
                    obj.put(k, Node::Raw(v));
                }
                Ok(Opened(obj))
            }
        }
        d.deserialize_map(Members(PhantomData))
    }
}

impl<'a> Doc<'a> {
    /// The object in `text` (the file at `path`, named in errors).
    ///
    /// # Errors
    /// Text that is not valid JSON, or not an object ("left unchanged").
    pub fn parse(text: &'a str, path: &std::path::Path) -> Result<Doc<'a>> {
        let whole: &RawValue = serde_json::from_str(text)
            .with_context(|| format!("{} is not valid JSON (left unchanged)", path.display()))?;
        if !whole.get().starts_with('{') {
            bail!("{} is not a JSON object (left unchanged)", path.display());
        }
        let root = Obj::open(whole)
            .with_context(|| format!("{} is not valid JSON (left unchanged)", path.display()))?;
        Ok(Doc { root })
    }

    /// The top-level object.
    pub fn root(&mut self) -> &mut Obj<'a> {
        &mut self.root
    }

    /// Whether a top-level key came twice, so rendering drops one even unchanged.
    pub fn had_duplicates(&self) -> bool {
        self.root.duplicates
    }

    /// The document in the `JSON.stringify(value, null, 2)` layout. `verbatim`: the text it was
    /// parsed from is in that layout already, so an untouched member is copied as it is.
    ///
    /// # Errors
    /// An untouched member that does not parse when laid out again (a string holding a lone
    /// surrogate), or nesting deeper than [`MAX_DEPTH`].
    pub fn render(&self, verbatim: bool) -> Result<String> {
        let mut out = String::new();
        self.render_to(&mut out, verbatim)?;
        Ok(out)
    }

    /// [`Doc::render`] into `out` a piece at a time (a large file is written or compared as it
    /// is rendered, never held rendered).
    ///
    /// # Errors
    /// As [`Doc::render`], and `out`'s.
    pub fn render_to(&self, out: &mut dyn Sink, verbatim: bool) -> Result<()> {
        self.root.write(out, 0, verbatim)
    }
}

impl<'a> Obj<'a> {
    /// The object `raw` (which must be one), opened one level.
    fn open(raw: &'a RawValue) -> Result<Obj<'a>> {
        let Opened(obj) = serde_json::from_str(raw.get())?;
        Ok(obj)
    }

    /// An object built from a parsed map.
    fn of_map(map: serde_json::Map<String, Value>) -> Obj<'a> {
        let mut obj = Obj::default();
        for (k, v) in map {
            obj.put(Cow::Owned(k), Node::Value(v));
        }
        obj
    }

    /// Sets `key` (in its first place when it is there) and says whether it was.
    fn put(&mut self, key: Cow<'a, str>, node: Node<'a>) -> bool {
        match self.index.get(&key) {
            Some(&i) => {
                self.members[i].1 = node;
                self.duplicates = true;
                true
            }
            None => {
                self.index.insert(key.clone(), self.members.len());
                self.members.push((key, node));
                false
            }
        }
    }

    fn node_mut(&mut self, key: &str) -> Option<&mut Node<'a>> {
        let i = *self.index.get(key)?;
        Some(&mut self.members[i].1)
    }

    /// The value of `key`, parsed (a copy; `None` when missing).
    ///
    /// # Errors
    /// A member that does not parse into a [`Value`] (a lone surrogate, too deep).
    pub fn get(&self, key: &str) -> Result<Option<Value>> {
        let Some(&i) = self.index.get(key) else {
            return Ok(None);
        };
        Ok(Some(match &self.members[i].1 {
            Node::Raw(r) => serde_json::from_str(r.get())?,
            Node::Obj(o) => o.to_value()?,
            Node::Value(v) => v.clone(),
        }))
    }

    /// Sets `key` to `value`, in the key's place when it is there, else at the end; whether it
    /// was there.
    pub fn insert(&mut self, key: impl Into<String>, value: Value) -> bool {
        let key = key.into();
        match self.node_mut(&key) {
            Some(n) => {
                *n = Node::Value(value);
                true
            }
            None => self.put(Cow::Owned(key), Node::Value(value)),
        }
    }

    /// The value of `key` parsed for a change, made from `new` when missing.
    ///
    /// # Errors
    /// As [`Obj::get`].
    pub fn value_mut(&mut self, key: &str, new: impl FnOnce() -> Value) -> Result<&mut Value> {
        if self.node_mut(key).is_none() {
            self.put(Cow::Owned(key.to_string()), Node::Value(new()));
        }
        let Some(node) = self.node_mut(key) else {
            unreachable!("inserted above")
        };
        let parsed = match node {
            Node::Raw(r) => Some(serde_json::from_str(r.get())?),
            Node::Obj(o) => Some(o.to_value()?),
            Node::Value(_) => None,
        };
        if let Some(v) = parsed {
            *node = Node::Value(v);
        }
        match node {
            Node::Value(v) => Ok(v),
            _ => unreachable!("parsed above"),
        }
    }

    /// The object at `key` opened one level (its own members stay unparsed), made from `new`
    /// when missing; `None` when the value there is not an object.
    ///
    /// # Errors
    /// A member that does not parse.
    pub fn object(
        &mut self,
        key: &str,
        new: impl FnOnce() -> Value,
    ) -> Result<Option<&mut Obj<'a>>> {
        if self.node_mut(key).is_none() {
            self.put(Cow::Owned(key.to_string()), Node::Value(new()));
        }
        let Some(node) = self.node_mut(key) else {
            unreachable!("inserted above")
        };
        let opened = match node {
            Node::Raw(r) if r.get().starts_with('{') => Some(Obj::open(r)?),
            Node::Value(Value::Object(m)) => Some(Obj::of_map(std::mem::take(m))),
            _ => None,
        };
        if let Some(o) = opened {
            *node = Node::Obj(Box::new(o));
        }
        Ok(match node {
            Node::Obj(o) => Some(o),
            _ => None,
        })
    }

    /// The whole object as a [`Value`].
    fn to_value(&self) -> Result<Value> {
        let mut map = serde_json::Map::new();
        for (k, n) in &self.members {
            let v = match n {
                Node::Raw(r) => serde_json::from_str(r.get())?,
                Node::Obj(o) => o.to_value()?,
                Node::Value(v) => v.clone(),
            };
            map.insert(k.to_string(), v);
        }
        Ok(Value::Object(map))
    }

    /// Writes the object at `depth` (see [`Doc::render`]).
    fn write(&self, out: &mut dyn Sink, depth: usize, verbatim: bool) -> Result<()> {
        if depth > MAX_DEPTH {
            bail!("it is nested deeper than {MAX_DEPTH} levels");
        }
        if self.members.is_empty() {
            out.put("{}")?;
            return Ok(());
        }
        out.put("{")?;
        for (i, (k, n)) in self.members.iter().enumerate() {
            out.put(if i == 0 { "\n" } else { ",\n" })?;
            indent(out, depth + 1)?;
            out.put(&serde_json::to_string(k.as_ref())?)?;
            out.put(": ")?;
            match n {
                Node::Raw(r) if verbatim => out.put(r.get())?,
                Node::Raw(r) => write_raw(out, r, depth + 1)?,
                Node::Obj(o) => o.write(out, depth + 1, verbatim)?,
                Node::Value(v) => write_value(out, v, depth + 1)?,
            }
        }
        out.put("\n")?;
        indent(out, depth)?;
        out.put("}")?;
        Ok(())
    }
}

fn indent(out: &mut dyn Sink, depth: usize) -> io::Result<()> {
    (0..depth).try_for_each(|_| out.put("  "))
}

/// `v` rendered at `depth`: its lines after the first indented to it (a JSON string holds no
/// raw line break, so every one is the layout's).
fn write_value(out: &mut dyn Sink, v: &Value, depth: usize) -> io::Result<()> {
    let text = render(v);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.put("\n")?;
            indent(out, depth)?;
        }
        out.put(line)?;
    }
    Ok(())
}

/// Untouched text laid out again at `depth`, a level at a time.
fn write_raw(out: &mut dyn Sink, raw: &RawValue, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        bail!("it is nested deeper than {MAX_DEPTH} levels");
    }
    let text = raw.get();
    if text.starts_with('{') {
        return Obj::open(raw)?.write(out, depth, false);
    }
    if text.starts_with('[') {
        let items: Vec<&RawValue> = serde_json::from_str(text)?;
        if items.is_empty() {
            out.put("[]")?;
            return Ok(());
        }
        out.put("[")?;
        for (i, item) in items.iter().enumerate() {
            out.put(if i == 0 { "\n" } else { ",\n" })?;
            indent(out, depth + 1)?;
            write_raw(out, item, depth + 1)?;
        }
        out.put("\n")?;
        indent(out, depth)?;
        out.put("]")?;
        return Ok(());
    }
    let v: Value = serde_json::from_str(text)?;
    write_value(out, &v, depth)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::format::Entry;
    use std::path::Path;

    /// What a parse into a map and a render give: the reference.
    fn rendered(text: &str) -> String {
        render(&serde_json::from_str::<Entry>(text).unwrap())
    }

    #[test]
    fn untouched_it_renders_as_the_whole_parse_does() {
        for text in [
            "{}",
            "{\"a\":1}",
            "{\"z\": 1.50, \"a\": [1, {\"b\": []}, {}], \"m\": {\"x\": \"\\u00e9\\/\\n\"}}",
            "{\"n\": 1E5, \"s\": \"\\u001f\", \"e\": {}, \"l\": [[], [[1]]], \"t\": true}",
            "{\"a\": 1, \"b\": {\"c\": 1, \"c\": 2}, \"a\": 3}",
            "  {\"k\" : null }  ",
            // Keys with escapes (read into owned strings, the others are slices of the text).
            "{\"\\u00e9t\\u00e9\": 1, \"a\\\"b\": {\"\\n\": 2}, \"\\u00e9t\\u00e9\": 3}",
        ] {
            let doc = Doc::parse(text, Path::new("f")).unwrap();
            assert_eq!(doc.render(false).unwrap(), rendered(text), "{text}");
            // In the layout already: copied as it is.
            let canonical = rendered(text);
            let doc = Doc::parse(&canonical, Path::new("f")).unwrap();
            assert_eq!(doc.render(true).unwrap(), canonical);
        }
        let doc = Doc::parse("{\"a\": 1, \"a\": 2}", Path::new("f")).unwrap();
        assert!(doc.had_duplicates());
    }

    #[test]
    fn changes_touch_only_their_members() {
        // `\ud800` (a lone surrogate) is valid JSON no Rust string holds: kept as bytes.
        let text = rendered(
            "{\"keep\": [1, 2.50, {\"x\": \"y\"}], \"projects\": {\"/a\": {\"t\": false, \"h\": [1]}, \
             \"/b\": {\"big\": \"LONE\"}}, \"n\": 1}",
        )
        .replace("LONE", "\\ud800");
        let mut doc = Doc::parse(&text, Path::new("f")).unwrap();
        let root = doc.root();
        assert_eq!(root.get("n").unwrap(), Some(Value::from(1)));
        assert!(root.insert("n", Value::Bool(true)));
        assert!(!root.insert("new", Value::Bool(true)));
        let projects = root.object("projects", || unreachable!()).unwrap().unwrap();
        let a = projects.value_mut("/a", || unreachable!()).unwrap();
        a["t"] = Value::Bool(true);
        let c = projects.value_mut("/c", || serde_json::json!({})).unwrap();
        c["t"] = Value::Bool(true);
        assert!(root.object("keep", || unreachable!()).unwrap().is_none());
        let out = doc.render(true).unwrap();
        let want = text
            .replace("\"t\": false", "\"t\": true")
            .replace("\"n\": 1\n}", "\"n\": true,\n  \"new\": true\n}")
            .replace(
                "\"big\": \"\\ud800\"\n    }\n  }",
                "\"big\": \"\\ud800\"\n    },\n    \"/c\": {\n      \"t\": true\n    }\n  }",
            );
        assert_eq!(out, want);
        // Laid out again, the lone surrogate cannot be parsed: refused, not changed.
        assert!(doc.render(false).is_err());
    }

    #[test]
    fn what_is_not_an_object_or_json_is_refused() {
        for (text, says) in [
            ("[1]", "not a JSON object"),
            ("\"x\"", "not a JSON object"),
            ("{\"a\": ", "not valid JSON"),
            ("", "not valid JSON"),
            ("{} x", "not valid JSON"),
        ] {
            let err = Doc::parse(text, Path::new("f")).unwrap_err();
            assert!(format!("{err:#}").contains(says), "{text}: {err:#}");
        }
        let deep = format!("{{\"a\": {}1{}}}", "[".repeat(200), "]".repeat(200));
        let doc = Doc::parse(&deep, Path::new("f")).unwrap();
        assert!(format!("{:#}", doc.render(false).unwrap_err()).contains("deeper than 128"));
    }
}
