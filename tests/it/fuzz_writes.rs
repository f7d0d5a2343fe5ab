//! What teamctl writes, checked over generated inputs: teammate text escaped for Markdown
//! against a CommonMark parser (it stays text, starts no CI workflow command), and a large
//! config.json edited where it changes against the whole file parsed and rendered again.
//! Seeded as fuzz.rs is (`TEAMCTL_FUZZ_SEED`, `TEAMCTL_FUZZ_CASES`), with its generator.

use crate::fuzz::{Rng, cases};

// ---- Teammate text in Markdown ---------------------------------------------------------------

/// A hostile string: Markdown syntax, HTML, backtick runs, controls, invisible characters,
/// Unicode white space, and lines that are CI workflow commands.
fn hostile_text(r: &mut Rng) -> String {
    const PIECES: &[&str] = &[
        "a",
        "Z",
        "9",
        " ",
        "  ",
        "\n",
        "\r",
        "\t",
        "\r\n",
        "*",
        "_",
        "`",
        "```",
        "````",
        "~~~",
        "#",
        "## ",
        "- ",
        "1. ",
        "> ",
        "|",
        "<",
        ">",
        "<img src=x onerror=alert(1)>",
        "</p>",
        "[l](http://e)",
        "![i](x)",
        "&amp;",
        "&#x1b;",
        "\\",
        "\\`",
        "@all",
        ":x:",
        "::",
        "::add-mask::x",
        "::stop-commands::t",
        "##[error]",
        "##vso[task]",
        "\u{1b}[2J",
        "\u{1b}]52;c;aGk=\u{7}",
        "\u{0}",
        "\u{7f}",
        "\u{9b}",
        "\u{85}",
        "\u{202e}",
        "\u{2066}",
        "\u{2028}",
        "\u{2029}",
        "\u{200b}",
        "\u{feff}",
        "\u{ad}",
        "\u{e0041}",
        "\u{a0}",
        "\u{3000}",
        "\u{2003}",
        "é",
        "日本",
        "❤\u{fe0f}",
        "x\u{fe0f}",
        "http://e.x",
        "www.e.x",
    ];
    let n = r.below(12);
    (0..n).map(|_| r.pick(PIECES)).collect()
}

/// Whether a CI runner reads a line as a command (after the white space it strips).
fn ci_command(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("::") || t.starts_with("##[") || t.to_ascii_lowercase().starts_with("##vso[")
}

/// A character as the escapers show it: controls and invisible characters (teamctl's one
/// list) as `\u{…}`.
fn visible(c: char) -> String {
    if teamctl::text::is_control(c) {
        format!("\\u{{{:x}}}", c as u32)
    } else {
        c.to_string()
    }
}

/// Every string the Markdown escaper makes of teammate text is, to a CommonMark parser
/// (pulldown-cmark, GitHub's dialect's core), exactly the text it was, shown: an inline field
/// is one paragraph of plain text (no emphasis, link, HTML, code, heading or list), a block is
/// one fenced code block holding the text, a path one code span. No output holds a control
/// character but a line break or (in a block) a tab, and no line of it is a CI command.
#[test]
fn markdown_escapes_are_text_to_a_commonmark_parser() {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    use teamctl::text::markdown::{code_span, fenced, inline};
    let mut r = Rng::new(4);
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let clean = |what: &str, s: &str, out: &str| {
        for c in out.chars() {
            assert!(
                !teamctl::text::is_control(c) || c == '\n' || c == '\t',
                "{what} of {s:?} carries U+{:04X}: {out:?}",
                c as u32
            );
        }
        for line in out.lines() {
            assert!(
                !ci_command(line),
                "{what} of {s:?}: a line is a command: {out:?}"
            );
        }
    };
    for _ in 0..cases(2000) {
        let s = hostile_text(&mut r);
        let max = 1 + r.below(30);

        // One inline field: a paragraph of plain text, the text as it was shown.
        let out = inline(&s, max);
        clean("inline", &s, &out);
        let mut want: String = s
            .trim()
            .chars()
            .take(max)
            .map(|c| match c {
                '\n' | '\r' | '\t' => " ".into(),
                c => visible(c),
            })
            .collect();
        if s.trim().chars().count() > max {
            want.push('…');
        }
        if want.is_empty() {
            want = "—".into();
        }
        let mut text = String::new();
        for ev in Parser::new_ext(&out, opts) {
            match ev {
                Event::Start(Tag::Paragraph) | Event::End(TagEnd::Paragraph) => {}
                Event::Text(t) => text.push_str(&t),
                other => panic!("inline of {s:?} makes {other:?}: {out:?}"),
            }
        }
        // A paragraph drops trailing spaces of its last line (the text shows none anyway).
        assert_eq!(text, want.trim_end(), "inline of {s:?}: {out:?}");

        // A block: one fenced code block, holding the text (lines that are commands defused).
        let f = fenced(&s, max);
        clean("fenced", &s, &f.block);
        let body: String = s
            .chars()
            .take(max)
            .map(|c| match c {
                '\n' | '\t' => c.to_string(),
                c => visible(c),
            })
            .collect();
        let body: Vec<String> = body
            .split('\n')
            .map(|l| teamctl::text::defuse_command(l).into_owned())
            .collect();
        let mut want = body.join("\n");
        if !want.ends_with('\n') {
            want.push('\n');
        }
        let (mut blocks, mut code) = (0, String::new());
        for ev in Parser::new_ext(&f.block, opts) {
            match ev {
                Event::Start(Tag::CodeBlock(_)) => blocks += 1,
                Event::Text(t) if blocks == 1 => code.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {}
                other => panic!("fenced of {s:?} makes {other:?}: {:?}", f.block),
            }
        }
        assert_eq!(blocks, 1, "fenced of {s:?}: {:?}", f.block);
        assert_eq!(code, want, "fenced of {s:?}: {:?}", f.block);
        assert_eq!(f.cut, s.chars().count().saturating_sub(max));

        // A path: one code span.
        let span = code_span(&s);
        clean("code_span", &s, &span);
        let want: String = s
            .chars()
            .map(|c| match c {
                '\n' | '\r' | '\t' => " ".into(),
                c => visible(c),
            })
            .collect();
        let want = if want.is_empty() {
            " ".to_string()
        } else {
            want
        };
        let events: Vec<Event> = Parser::new_ext(&span, opts).collect();
        match events.as_slice() {
            [
                Event::Start(Tag::Paragraph),
                Event::Code(c),
                Event::End(TagEnd::Paragraph),
            ] => {
                assert_eq!(c.as_ref(), want, "code_span of {s:?}: {span:?}")
            }
            other => panic!("code_span of {s:?} makes {other:?}: {span:?}"),
        }
    }
}

// ---- Editing a large config where it changes ----------------------------------------------

/// A JSON value as text, in no particular layout: numbers as people and programs write them,
/// strings with every escape, duplicate keys now and then, white space anywhere.
fn json_text(r: &mut Rng, depth: usize, out: &mut String) {
    let ws = |r: &mut Rng, out: &mut String| {
        if r.chance(30) {
            out.push_str(r.pick(&[" ", "\n", "  ", "\t", "\r\n   "]));
        }
    };
    const KEYS: &[&str] = &[
        "a",
        "b",
        "projects",
        "hasCompletedOnboarding",
        "\\u0041",
        "k\\\"q",
        "/src/p",
        "é",
        "\\ud83d\\ude00",
        "",
    ];
    const STRINGS: &[&str] = &[
        "",
        "x",
        "\\n",
        "\\/",
        "\\u00e9",
        "\\u001f",
        "\\\\",
        "\\\"",
        "é✓",
        "\\ud83d\\ude00",
        "\\t\\b\\f\\r",
        "\\u2028",
    ];
    let kind = if depth >= 5 { r.below(4) } else { r.below(7) };
    match kind {
        0 => out.push_str(r.pick(&["null", "true", "false"])),
        1 => out.push_str(r.pick(&[
            "0",
            "-0",
            "1",
            "12",
            "1.50",
            "-2.5",
            "1E5",
            "2.5e-3",
            "1e21",
            "1e-7",
            "0.1",
            "123456789012345678901234567890",
        ])),
        2 | 3 => {
            out.push('"');
            for _ in 0..r.below(4) {
                out.push_str(r.pick(STRINGS));
            }
            out.push('"');
        }
        4 => {
            out.push('[');
            for i in 0..r.below(4) {
                if i > 0 {
                    out.push(',');
                }
                ws(r, out);
                json_text(r, depth + 1, out);
                ws(r, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..r.below(5) {
                if i > 0 {
                    out.push(',');
                }
                ws(r, out);
                out.push('"');
                out.push_str(r.pick(KEYS));
                out.push('"');
                ws(r, out);
                out.push(':');
                ws(r, out);
                json_text(r, depth + 1, out);
            }
            ws(r, out);
            out.push('}');
        }
    }
}

/// `prepare` edits `.claude.json` without parsing what it does not change (so a 90 MB file
/// is not a 700 MB tree). Over generated files, in Claude Code's layout or any other, the
/// edit gives byte for byte what parsing the whole file, making the same change and rendering
/// it gives; and a file is taken as already in the layout exactly when it is.
#[test]
fn editing_where_it_changes_renders_as_the_whole_parse() {
    use serde_json::{Map, Value};
    use teamctl::store::format::{canonical_object, render};
    use teamctl::store::lazy::{Doc, MAX_DEPTH};
    let mut r = Rng::new(5);
    let path = std::path::Path::new("f.json");
    let mut checked = 0;
    for _ in 0..cases(3000) {
        let mut text = String::from("{");
        for i in 0..r.below(6) {
            if i > 0 {
                text.push(',');
            }
            let key = r.pick(&["a", "b", "projects", "hasCompletedOnboarding", "n"]);
            text.push_str(&format!("\"{key}\":"));
            json_text(&mut r, 1, &mut text);
        }
        text.push('}');
        let Ok(whole) = serde_json::from_str::<Map<String, Value>>(&text) else {
            continue;
        };
        let laid_out = render(&whole);
        // The same file in the layout and as it was written.
        for (t, canonical) in [(laid_out.as_str(), true), (text.as_str(), text == laid_out)] {
            assert_eq!(
                canonical_object(t.as_bytes(), MAX_DEPTH),
                canonical || t == laid_out,
                "{t}"
            );
            let key = r.pick(&["a", "hasCompletedOnboarding", "new"]).to_string();
            let dir = r.pick(&["/src/p", "/work", "a"]).to_string();
            let trust = r.chance(70);
            // The reference: the whole file parsed, changed, rendered.
            let mut want = whole.clone();
            want.insert(key.clone(), Value::Bool(true));
            let mut want_ok = true;
            if trust {
                match want
                    .entry("projects")
                    .or_insert_with(|| Value::Object(Map::new()))
                {
                    Value::Object(p) => match p
                        .entry(dir.clone())
                        .or_insert_with(|| Value::Object(Map::new()))
                    {
                        Value::Object(o) => {
                            o.insert("hasTrustDialogAccepted".into(), Value::Bool(true));
                        }
                        _ => want_ok = false,
                    },
                    _ => want_ok = false,
                }
            }
            // The edit where it changes.
            let mut doc = Doc::parse(t, path).unwrap();
            let root = doc.root();
            root.insert(key.clone(), Value::Bool(true));
            let mut got_ok = true;
            if trust {
                match root
                    .object("projects", || Value::Object(Map::new()))
                    .unwrap()
                {
                    Some(p) => match p.value_mut(&dir, || Value::Object(Map::new())).unwrap() {
                        Value::Object(o) => {
                            o.insert("hasTrustDialogAccepted".into(), Value::Bool(true));
                        }
                        _ => got_ok = false,
                    },
                    None => got_ok = false,
                }
            }
            assert_eq!(got_ok, want_ok, "{t}");
            if want_ok {
                let verbatim = canonical_object(t.as_bytes(), MAX_DEPTH);
                assert_eq!(doc.render(verbatim).unwrap(), render(&want), "{t}");
                checked += 1;
            }
        }
    }
    assert!(checked >= cases(3000), "only {checked} edits compared");
}
