//! The `JSON.stringify(value, null, 2)` layout: rendering it, and recognising a file that is
//! already in it so an append can splice bytes instead of re-rendering the whole file.
//!
//! [`canonical_inbox`] accepts exactly the bytes that [`render`] would produce for an array of
//! objects, with two liberties that keep bytes as they are: duplicate keys are not looked for,
//! and numbers are accepted as written when they follow JSON's grammar; one with an exponent
//! only in the form `JSON.stringify` writes its value (`1e+21`, `1e-7`; see [`js_number`]).
//! Anything else (other indentation, `\/`, escaped non-ASCII, `1E5`, a trailing newline) is not
//! canonical and takes the slow path: parse and render.

use serde::Serialize;
use serde_json::{Map, Value};

/// One inbox entry: a JSON object with its keys in file order.
pub type Entry = Map<String, Value>;

/// Renders `value` exactly as `JSON.stringify(value, null, 2)`: two-space indent, keys in
/// insertion order, no trailing newline, `[]`/`{}` when empty. A number keeps the text it was
/// read with, except one written with an exponent, which is written as `JSON.stringify` writes
/// its value ([`js_number`]: `1E5` → `100000`, never serde_json's `1e+5`).
pub fn render<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, JsFormatter::default());
    // Serializing maps with string keys into memory cannot fail.
    if value.serialize(&mut ser).is_err() {
        return String::new();
    }
    String::from_utf8(out).unwrap_or_default()
}

/// serde_json's pretty layout (two spaces), with numbers as [`render`] says.
#[derive(Default)]
struct JsFormatter(serde_json::ser::PrettyFormatter<'static>);

impl serde_json::ser::Formatter for JsFormatter {
    fn write_number_str<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        value: &str,
    ) -> std::io::Result<()> {
        match js_number(value) {
            Some(js) => w.write_all(js.as_bytes()),
            None => w.write_all(value.as_bytes()),
        }
    }
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// For a JSON number written with an exponent (`1E5`, `2.5e+3`, `1e-7`), the text
/// `JSON.stringify` writes for its value (`100000`, `2500`, `1e-7`; `null` for one too large
/// for a double, as JavaScript reads it as `Infinity`); `None` for a number without an
/// exponent, whose text is kept as written.
pub fn js_number(text: &str) -> Option<String> {
    if !text.contains(['e', 'E']) {
        return None;
    }
    let v: f64 = text.parse().ok()?;
    Some(js_format(v))
}

/// The shortest digits of `v` (`digits` × 10^(`exp` - len + 1)) as ECMAScript picks them when
/// two such strings are equally close to `v`: the one ending in an even digit (Rust picks the
/// larger).
fn even_on_a_tie(v: f64, digits: String, exp: i32) -> String {
    let last = digits.bytes().last().map_or(0, |b| b - b'0');
    if last.is_multiple_of(2) || digits.len() < 2 {
        return digits;
    }
    // `v` exactly, as decimal digits: a double needs at most 767 significant ones.
    let exact = format!("{:.800e}", v);
    let Some((m, e)) = exact.split_once('e') else {
        return digits;
    };
    if e.parse::<i32>().ok() != Some(exp) {
        return digits;
    }
    let exact: String = m.chars().filter(|c| *c != '.').collect();
    let down = {
        let mut d = digits.clone().into_bytes();
        let n = d.len();
        d[n - 1] -= 1;
        String::from_utf8(d).unwrap_or_default()
    };
    // A tie: `v` is exactly halfway, `down` followed by 5 and zeros.
    let (head, tail) = exact.split_at(digits.len().min(exact.len()));
    let halfway = head == down && tail.starts_with('5') && tail[1..].bytes().all(|b| b == b'0');
    if halfway && format!("{down}e{}", exp - digits.len() as i32 + 1).parse::<f64>() == Ok(v) {
        down
    } else {
        digits
    }
}

/// ECMAScript's `Number::toString(10)` of `v` as `JSON.stringify` writes it: the shortest
/// digits that read back as `v`, in plain notation for decimal exponents from -6 to 20, else
/// `d.ddde±n`; `-0` is `0`, and a value that is not finite is `null`.
pub fn js_format(v: f64) -> String {
    if !v.is_finite() {
        return "null".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    // Rust's `{:e}` is the shortest round-trip digits: `d.ddde±x` or `de±x`.
    let sci = format!("{:e}", v.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let digits = even_on_a_tie(v.abs(), digits, exp.parse().unwrap_or(0));
    let k = digits.len() as i64;
    // v = 0.digits × 10^n
    let n = exp.parse::<i64>().unwrap_or(0) + 1;
    let mut out = String::new();
    if v < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = n - 1;
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        out.push_str(&e.abs().to_string());
    }
    out
}

/// `entry` rendered as an element of a top-level array: indented by two spaces, no newline
/// around it.
pub fn render_element(entry: &Entry) -> String {
    let array = render(std::slice::from_ref(entry));
    array["[\n".len()..array.len() - "\n]".len()].to_string()
}

/// The array `bytes` (canonical, holding `count` objects) with `element` ([`render_element`])
/// appended, as two pieces to write one after the other: a prefix borrowed from `bytes` (so a
/// large inbox is not copied) and the new tail.
pub fn splice_append<'a>(bytes: &'a [u8], count: usize, element: &str) -> (&'a [u8], Vec<u8>) {
    // `[]` keeps its `[`; `[\n…\n]` keeps everything up to the last element's `}`.
    let (keep, sep) = if count == 0 {
        (1, "\n")
    } else {
        (bytes.len() - 2, ",\n")
    };
    (&bytes[..keep], format!("{sep}{element}\n]").into_bytes())
}

/// If `bytes` is exactly the canonical rendering of a JSON array of objects, the number of
/// objects; otherwise `None`.
pub fn canonical_inbox(bytes: &[u8]) -> Option<usize> {
    if bytes == b"[]" {
        return Some(0);
    }
    std::str::from_utf8(bytes).ok()?;
    let mut c = Checker {
        b: bytes,
        i: 0,
        max_depth: usize::MAX,
    };
    c.lit(b"[\n")?;
    let mut count = 0;
    loop {
        c.indent(1)?;
        if c.peek()? != b'{' {
            return None;
        }
        c.value(1)?;
        count += 1;
        match c.peek()? {
            b',' => c.lit(b",\n")?,
            b'\n' => break,
            _ => return None,
        }
    }
    c.lit(b"\n]")?;
    (c.i == bytes.len()).then_some(count)
}

/// Whether `bytes` is exactly what [`render`] gives for the object it holds (with the same two
/// liberties as [`canonical_inbox`]: duplicate keys are not looked for, numbers are kept as
/// written), so any member's text can be copied as it is. Nesting deeper than `max_depth` is
/// not looked into: `false`.
pub fn canonical_object(bytes: &[u8], max_depth: usize) -> bool {
    if std::str::from_utf8(bytes).is_err() || bytes.first() != Some(&b'{') {
        return false;
    }
    let mut c = Checker {
        b: bytes,
        i: 0,
        max_depth,
    };
    c.value(0).is_some() && c.i == bytes.len()
}

/// The value of the escape `\uXXXX` starting at `bytes[i]` (the backslash), if it is one.
fn escape_at(bytes: &[u8], i: usize) -> Option<u16> {
    let e = bytes.get(i..i + 6)?;
    if e[0] != b'\\' || e[1] != b'u' {
        return None;
    }
    u16::from_str_radix(std::str::from_utf8(&e[2..]).ok()?, 16).ok()
}

/// When the escape at `bytes[i]` is a surrogate in lowercase hex, as `JSON.stringify` writes a
/// lone one, and not followed by its other half, its length (6).
fn lone_surrogate_at(bytes: &[u8], i: usize) -> Option<usize> {
    let code = escape_at(bytes, i)?;
    let lower = bytes[i + 2..i + 6]
        .iter()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b));
    if !lower || !(0xd800..=0xdfff).contains(&code) {
        return None;
    }
    // A low surrogate after a high one is never reached: the checker refuses the escaped pair
    // at its first half (JSON.stringify writes a pair as the character itself).
    let pairs_with_next =
        code < 0xdc00 && escape_at(bytes, i + 6).is_some_and(|c| (0xdc00..=0xdfff).contains(&c));
    (!pairs_with_next).then_some(6)
}

/// `bytes` with every escaped lone surrogate (`\ud800`: valid JSON that JavaScript reads and
/// `JSON.stringify` writes, but that no Rust string can hold) replaced by `\ufffd`, or `None`
/// when there is none. For showing such a file only: writing the result back would change the
/// text of an entry.
pub fn replace_lone_surrogates(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        // Any code point escape, surrogate or not, is six bytes; every other escape two.
        let is_surrogate = escape_at(bytes, i).is_some_and(|c| (0xd800..=0xdfff).contains(&c));
        let lone = is_surrogate && {
            let code = escape_at(bytes, i).unwrap_or(0);
            let next_low = escape_at(bytes, i + 6).is_some_and(|c| (0xdc00..=0xdfff).contains(&c));
            !(code < 0xdc00 && next_low)
        };
        if is_surrogate && !lone {
            i += 12; // a high and low surrogate: a valid pair
        } else if lone {
            let o = out.get_or_insert_with(Vec::new);
            o.extend_from_slice(&bytes[copied..i]);
            o.extend_from_slice(b"\\ufffd");
            i += 6;
            copied = i;
        } else {
            i += if escape_at(bytes, i).is_some() { 6 } else { 2 };
        }
    }
    let mut o = out?;
    o.extend_from_slice(&bytes[copied..]);
    Some(o)
}

struct Checker<'a> {
    b: &'a [u8],
    i: usize,
    /// The deepest level looked into.
    max_depth: usize,
}

impl Checker<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn lit(&mut self, s: &[u8]) -> Option<()> {
        if self.b.get(self.i..self.i + s.len())? == s {
            self.i += s.len();
            Some(())
        } else {
            None
        }
    }

    fn indent(&mut self, level: usize) -> Option<()> {
        let n = level * 2;
        let s = self.b.get(self.i..self.i + n)?;
        if s.iter().all(|&c| c == b' ') {
            self.i += n;
            Some(())
        } else {
            None
        }
    }

    fn value(&mut self, level: usize) -> Option<()> {
        if level > self.max_depth {
            return None;
        }
        match self.peek()? {
            b'{' => self.container(level, b'}', true),
            b'[' => self.container(level, b']', false),
            b'"' => self.string(),
            b't' => self.lit(b"true"),
            b'f' => self.lit(b"false"),
            b'n' => self.lit(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// `{}` / `[]`, or `{\n<indent+1>"k": v,\n…\n<indent>}`.
    fn container(&mut self, level: usize, close: u8, object: bool) -> Option<()> {
        self.i += 1;
        if self.peek()? == close {
            self.i += 1;
            return Some(());
        }
        loop {
            self.lit(b"\n")?;
            self.indent(level + 1)?;
            if object {
                if self.peek()? != b'"' {
                    return None;
                }
                self.string()?;
                self.lit(b": ")?;
            }
            self.value(level + 1)?;
            match self.next()? {
                b',' => {}
                b'\n' => {
                    self.indent(level)?;
                    return (self.next()? == close).then_some(());
                }
                _ => return None,
            }
        }
    }

    /// A string as JSON.stringify escapes it: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, and
    /// `\u00xx` (lowercase) for the other control characters; everything else literal.
    fn string(&mut self) -> Option<()> {
        self.i += 1;
        loop {
            self.i += plain_run(self.b.get(self.i..)?);
            match self.next()? {
                b'"' => return Some(()),
                b'\\' => match self.next()? {
                    b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                    b'u' => {
                        let hex = self.b.get(self.i..self.i + 4)?;
                        if let Some(len) = lone_surrogate_at(self.b, self.i - 2) {
                            // JSON.stringify escapes a lone surrogate as `\udxxx`.
                            self.i += len - 2;
                            continue;
                        }
                        self.i += 4;
                        let ok = hex[..2] == *b"00"
                            && matches!(hex[2], b'0' | b'1')
                            && matches!(hex[3], b'0'..=b'9' | b'a'..=b'f');
                        let code = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
                        if !ok || matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                            return None;
                        }
                    }
                    _ => return None,
                },
                _ => return None, // a raw control character
            }
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?(e[+-][0-9]+)?`, and when it has an exponent, exactly as
    /// `JSON.stringify` writes its value ([`js_number`]: what [`render`] writes).
    fn number(&mut self) -> Option<()> {
        let start = self.i;
        self.number_grammar()?;
        let text = std::str::from_utf8(&self.b[start..self.i]).ok()?;
        match js_number(text) {
            Some(js) if js != text => None,
            _ => Some(()),
        }
    }

    fn number_grammar(&mut self) -> Option<()> {
        if self.peek()? == b'-' {
            self.i += 1;
        }
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.digits(0)?,
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            self.digits(1)?;
        }
        if self.peek() == Some(b'e') {
            self.i += 1;
            if !matches!(self.next()?, b'+' | b'-') {
                return None;
            }
            self.digits(1)?;
        }
        Some(())
    }

    fn digits(&mut self, min: usize) -> Option<()> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        (self.i - start >= min).then_some(())
    }
}

/// The length of the leading run of bytes that need no escaping (not `"`, `\\` or a control
/// character). Eight bytes at a time: string contents are most of an inbox's bytes.
fn plain_run(b: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let mut i = 0;
    for chunk in b.chunks_exact(8) {
        let w = u64::from_ne_bytes(chunk.try_into().unwrap_or_default());
        let quote = has_zero(w ^ u64::from_ne_bytes([b'"'; 8]));
        let backslash = has_zero(w ^ u64::from_ne_bytes([b'\\'; 8]));
        // A byte below 0x20: subtracting 0x20 borrows into its high bit (bytes >= 0x80 masked).
        let control = w.wrapping_sub(u64::from_ne_bytes([0x20; 8])) & !w & HIGHS;
        if quote | backslash | control != 0 {
            break;
        }
        i += 8;
    }
    i + b[i..]
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .unwrap_or(b.len() - i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn canon(json: &str) -> String {
        render(&serde_json::from_str::<Value>(json).unwrap())
    }

    #[test]
    fn lone_surrogates_as_json_stringify_writes_them() {
        // JSON.stringify(["x\ud800", "\udc00", "\\udc00"], null, 2) inside an entry.
        let lone = "[\n  {\n    \"t\": \"x\\ud800\",\n    \"u\": \"\\udc00\",\n    \"v\": \"\\\\udc00\"\n  }\n]";
        assert_eq!(canonical_inbox(lone.as_bytes()), Some(1));
        let fixed = replace_lone_surrogates(lone.as_bytes()).unwrap();
        assert_eq!(
            String::from_utf8(fixed).unwrap(),
            lone.replace("x\\ud800", "x\\ufffd")
                .replace("\"\\udc00\"", "\"\\ufffd\"")
        );
        // An escaped pair, or upper-case hex, is not what JSON.stringify writes.
        let pair = "[\n  {\n    \"t\": \"\\ud83d\\ude00\"\n  }\n]";
        assert_eq!(canonical_inbox(pair.as_bytes()), None);
        assert_eq!(replace_lone_surrogates(pair.as_bytes()), None);
        assert_eq!(
            canonical_inbox(b"[\n  {\n    \"t\": \"\\uD800\"\n  }\n]"),
            None
        );
        assert_eq!(replace_lone_surrogates(b"[{\"a\":\"\\\\ud800\"}]"), None);
    }

    #[test]
    fn numbers_with_an_exponent_are_written_as_json_stringify_writes_them() {
        // Each pair: the text in a file, what `JSON.stringify(JSON.parse(text))` writes.
        for (text, js) in [
            ("1E5", "100000"),
            ("1e5", "100000"),
            ("2.5E+3", "2500"),
            ("1e21", "1e+21"),
            ("1.5e300", "1.5e+300"),
            ("1e-7", "1e-7"),
            ("1.25e-7", "1.25e-7"),
            ("1e-6", "0.000001"),
            ("-1.5E-3", "-0.0015"),
            ("123456789e-2", "1234567.89"),
            ("1e20", "100000000000000000000"),
            ("0e5", "0"),
            ("-0e0", "0"),
            ("1E400", "null"),
            ("5e-324", "5e-324"),
            // Two shortest forms, equally close: JavaScript takes the even one.
            ("1.6642642685876773E15", "1664264268587677.2"),
        ] {
            assert_eq!(js_number(text).as_deref(), Some(js), "{text}");
        }
        assert_eq!(js_number("1.50"), None, "no exponent: kept as written");
        let e: Vec<Entry> =
            serde_json::from_str(r#"[{"n":1E5,"m":1.50,"k":-0,"e":1e-7,"b":1E400}]"#).unwrap();
        assert_eq!(
            render(&e),
            "[\n  {\n    \"n\": 100000,\n    \"m\": 1.50,\n    \"k\": -0,\n    \"e\": 1e-7,\n    \"b\": null\n  }\n]"
        );
        // The checker takes exponents only in that form.
        assert_eq!(
            canonical_inbox(b"[\n  {\n    \"n\": 1e+21\n  }\n]"),
            Some(1)
        );
        assert_eq!(canonical_inbox(b"[\n  {\n    \"n\": 1e+5\n  }\n]"), None);
    }

    #[test]
    fn accepts_what_render_produces() {
        for json in [
            "[]",
            r#"[{}]"#,
            r#"[{"a":1,"b":[],"c":{},"d":[1,[2,{"x":null}]],"e":true,"f":false}]"#,
            r#"[{"s":"q\"b\\s/\u0001\u001f\b\f\n\r\t é \u2028 😀 \u007f"},{"n":-0.5e-7,"m":1e+21,"z":0}]"#,
        ] {
            let c = canon(json);
            let n = serde_json::from_str::<Vec<Value>>(json).unwrap().len();
            assert_eq!(canonical_inbox(c.as_bytes()), Some(n), "{c}");
        }
    }

    #[test]
    fn refuses_everything_else() {
        let good = canon(r#"[{"a":"x","b":[1,2]}]"#);
        let bad = [
            format!("{good}\n"),
            good.replace("  ", "    "),
            good.replace(": ", ":"),
            good.replace("\"x\"", "\"\\/\""),
            good.replace("\"x\"", "\"\\u00e9\""),
            good.replace("\"x\"", "\"\\u000a\""),
            good.replace("\"x\"", "\"\\u001F\""),
            good.replace("1,", "1E5,"),
            good.replace("1,", "1e5,"),
            good.replace("1,", "01,"),
            good.replace("1,", "1.,"),
            good.replace("1,", "1 ,"),
            good.replace("\"x\"", "\"a\tb\""),
            "[1]".to_string(),
            canon("[1]"),
            canon(r#"[{"a":1},2]"#),
            "{}".to_string(),
            "".to_string(),
            "[\n]".to_string(),
            good[..good.len() - 1].to_string(),
        ];
        for b in bad {
            assert_eq!(canonical_inbox(b.as_bytes()), None, "{b:?}");
        }
        assert_eq!(canonical_inbox(b"[{\"a\": \"\xff\"}]"), None);
    }

    #[test]
    fn plain_run_stops_at_the_first_special_byte() {
        let mut text = vec![b'a'; 40];
        assert_eq!(plain_run(&text), 40);
        for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
            for pos in 0..40 {
                text[pos] = special;
                assert_eq!(plain_run(&text), pos, "{special} at {pos}");
                text[pos] = b'a';
            }
        }
        // Multi-byte UTF-8 and DEL are plain.
        assert_eq!(
            plain_run("é😀\u{7f}\u{2028}xyz".as_bytes()),
            "é😀\u{7f}\u{2028}xyz".len()
        );
    }

    #[test]
    fn splice_equals_render() {
        let e1: Entry = serde_json::from_str(r#"{"from":"a","text":"x"}"#).unwrap();
        let e2: Entry = serde_json::from_str(r#"{"from":"b","text":"y","n":{"k":[1]}}"#).unwrap();
        let join = |(a, b): (&[u8], Vec<u8>)| [a, &b].concat();
        let empty = render(&Vec::<Entry>::new());
        let one = join(splice_append(empty.as_bytes(), 0, &render_element(&e1)));
        assert_eq!(one, render(&vec![e1.clone()]).as_bytes());
        let two = join(splice_append(&one, 1, &render_element(&e2)));
        assert_eq!(two, render(&vec![e1, e2]).as_bytes());
    }

    /// Every byte string the checker accepts parses, and renders back to itself.
    #[test]
    fn accepted_mutations_are_fixed_points() {
        let base = canon(
            // No key is one mutation away from another, so no duplicate keys can appear.
            r#"[{"p":"x\n","q":[1,-2.5,3e+27],"r":{"s":null,"t":true}},{"v":"\u0007é","w":[]}]"#,
        );
        let bytes = base.as_bytes();
        let alphabet = b" \n\",:[]{}\\aeu0-+.1";
        let mut accepted = 0;
        for i in 0..bytes.len() {
            for &c in alphabet {
                for op in 0..3 {
                    let mut m = bytes.to_vec();
                    match op {
                        0 => m[i] = c,
                        1 => m.insert(i, c),
                        _ => {
                            m.remove(i);
                        }
                    }
                    if let Some(n) = canonical_inbox(&m) {
                        accepted += 1;
                        let v: Vec<Value> = serde_json::from_slice(&m).unwrap_or_else(|e| {
                            panic!(
                                "accepted invalid JSON {e}: {:?}",
                                String::from_utf8_lossy(&m)
                            )
                        });
                        assert_eq!(v.len(), n);
                        assert_eq!(
                            render(&v).as_bytes(),
                            &m[..],
                            "{:?}",
                            String::from_utf8_lossy(&m)
                        );
                    }
                }
            }
        }
        assert!(accepted > 0);
    }
}
