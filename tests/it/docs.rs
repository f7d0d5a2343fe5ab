//! The documentation holds together: every relative link in `README.md` and `docs/**/*.md`
//! leads to a file that exists, every `#anchor` to a heading of that page (GitHub's rules), and
//! every struct `docs/json.md` names is declared in the file it points at. No network: links
//! with a scheme (`https:`, `mailto:`) are not followed. docs/development.md's map names every
//! module by its path, and the tests stay in rooms (no file over 900 lines, no test over 150).

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `README.md` and every `.md` under `docs/`.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut out = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut out);
    out.sort();
    out
}

/// The lines of `md` outside fenced code blocks, with inline code spans blanked out (a link
/// inside backticks is text).
fn prose(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for line in md.lines() {
        let t = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| t.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(f), Some(m)) if f == m && t.trim_end() == m => fence = None,
            (None, None) => out.push(blank_code(line)),
            _ => {}
        }
    }
    out
}

fn blank_code(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    let mut prev_escape = false;
    for c in line.chars() {
        if c == '`' && !prev_escape {
            in_code = !in_code;
            out.push('`');
        } else {
            out.push(if in_code { ' ' } else { c });
        }
        prev_escape = c == '\\' && !prev_escape;
    }
    out
}

/// The targets of the inline links `[text](target)` in `md`.
fn links(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(md) {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let escaped = rest[..at].ends_with('\\');
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            if !escaped {
                let target = after[..end].split_whitespace().next().unwrap_or("");
                out.push(target.to_owned());
            }
            rest = &after[end.min(after.len())..];
        }
    }
    out
}

/// The anchors GitHub gives the headings of `md`: the heading's text (code spans kept, link
/// syntax and backslash escapes dropped), lower-cased, every character that is not a letter,
/// a digit, a space, '-' or '_' removed, spaces turned into '-'; a repeated anchor gets
/// `-1`, `-2`, ….
fn anchors(md: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    let mut fence = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        let Some(text) = line
            .strip_prefix('#')
            .map(|l| l.trim_start_matches('#'))
            .filter(|l| !fence && l.starts_with(' '))
        else {
            continue;
        };
        let text = strip_links(text.trim());
        let slug: String = text
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.push(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    out
}

/// `[text](target)` becomes `text`.
fn strip_links(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](").map(|m| open + m) else {
            break;
        };
        let Some(close) = rest[mid..].find(')').map(|c| mid + c) else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..mid]);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let md = fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        for target in links(&md) {
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(path)
            };
            if !file.exists() {
                broken.push(format!("{name}: {target}: no such file"));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if file.extension().is_none_or(|x| x != "md") {
                broken.push(format!(
                    "{name}: {target}: an anchor into a file that is not Markdown"
                ));
                continue;
            }
            let heads = anchors(&fs::read_to_string(&file).unwrap());
            if !heads.iter().any(|h| h == anchor) {
                broken.push(format!("{name}: {target}: no heading with that anchor"));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} links found: is the parser broken?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// Each row of json.md's table names structs in backticks followed by "in [path](…)": each must
/// be declared in that file, so a renamed or moved struct fails here rather than misleading.
#[test]
fn json_md_names_structs_that_exist() {
    let md = fs::read_to_string(root().join("docs/json.md")).unwrap();
    let mut missing = Vec::new();
    let mut checked = 0;
    for row in md.lines().filter(|l| l.starts_with("| `")) {
        let produced_by = row.trim_end_matches('|').rsplit('|').next().unwrap();
        for part in produced_by.split(';') {
            let Some((names, file)) = part.split_once(" in [") else {
                continue;
            };
            let path = file.split_once("](").unwrap().0;
            let source = fs::read_to_string(root().join(path)).unwrap();
            for name in names.split('`').skip(1).step_by(2) {
                checked += 1;
                let declared = [format!("struct {name}"), format!("enum {name}")]
                    .iter()
                    .any(|d| {
                        source.contains(&format!("{d} "))
                            || source.contains(&format!("{d}<"))
                            || source.contains(&format!("{d}("))
                    });
                if !declared {
                    missing.push(format!("{name} in {path}"));
                }
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} structs found: is the table's layout changed?"
    );
    assert!(
        missing.is_empty(),
        "docs/json.md names structs that are not there: {missing:?}"
    );
}

#[test]
fn anchors_follow_github() {
    let md = "# teamctl\n## `teamctl create`\n### Finding `claude`\n## The sent log's privacy\n\
              ## Exit codes\n## Exit codes\n```\n# not a heading\n```\n## [Link](x.md) here\n\
              ## What it does: a, b & c\n";
    assert_eq!(
        anchors(md),
        [
            "teamctl",
            "teamctl-create",
            "finding-claude",
            "the-sent-logs-privacy",
            "exit-codes",
            "exit-codes-1",
            "link-here",
            "what-it-does-a-b--c"
        ]
    );
    assert_eq!(
        links("[a](b.md) `[c](d.md)` \\[e\\](f) [g](h.md#i \"title\")\n```\n[j](k)\n```"),
        ["b.md", "h.md#i"]
    );
}

/// Every `.rs` file under `dir`, as a path from the repository's root (`src/store/lock.rs`).
fn rust_files(dir: &str) -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "node_modules") {
                    walk(&p, out);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join(dir), &mut files);
    let mut out: Vec<String> = files
        .iter()
        .map(|p| {
            p.strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    out.sort();
    out
}

/// The paths docs/development.md's map ("Where things go") names: the first word of each line
/// of its block that does not start with a space (a description's next lines do).
fn map_paths() -> Vec<String> {
    let doc = fs::read_to_string(root().join("docs/development.md")).unwrap();
    let map = &doc[doc.find("## Where things go").expect("the map's heading")..];
    let block = map.split("```").nth(1).expect("the map's block");
    block
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with(' '))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

/// docs/development.md's map ("Where things go") names every module, each by its path on a
/// line of its own (`src/store/lock.rs   the mkdir lock`): a newcomer finds each room from
/// it. A path it names is there, and named once.
#[test]
fn the_development_map_names_every_module() {
    let named = map_paths();
    let set: std::collections::HashSet<&str> = named.iter().map(String::as_str).collect();
    let missing: Vec<String> = rust_files("src")
        .into_iter()
        .filter(|p| !set.contains(p.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/development.md's map does not name, each on a line of its own: {missing:?}"
    );
    let gone: Vec<&String> = named.iter().filter(|p| !root().join(p).exists()).collect();
    assert!(
        gone.is_empty(),
        "docs/development.md's map names what is not there: {gone:?}"
    );
    let mut twice: Vec<&String> = named
        .iter()
        .filter(|p| named.iter().filter(|q| q == p).count() > 1)
        .collect();
    twice.dedup();
    assert!(
        twice.is_empty(),
        "docs/development.md's map names twice: {twice:?}"
    );
}

/// The test functions of a Rust file longer than `max` lines (from `fn` to its closing brace,
/// found at the `fn`'s indentation), as `path:line name (lines)`.
fn long_tests(path: &str, text: &str, max: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        if !(t.starts_with("fn ") || t.starts_with("async fn ")) || t.ends_with(';') {
            continue;
        }
        let attrs = lines[..i]
            .iter()
            .rev()
            .take_while(|a| a.trim_start().starts_with("#[") || a.trim_start().starts_with("//"));
        if !attrs.into_iter().any(|a| {
            let a = a.trim_start();
            a.starts_with("#[test") || (a.starts_with("#[") && a.contains("::test"))
        }) {
            continue;
        }
        let indent = &l[..l.len() - t.len()];
        let close = format!("{indent}}}");
        let end = (i + 1..lines.len())
            .find(|&k| lines[k] == close)
            .unwrap_or(lines.len() - 1);
        let n = end - i + 1;
        if n > max {
            let name = t.split(['(', '<']).next().unwrap();
            out.push(format!("{path}:{} {name} ({n} lines)", i + 1));
        }
    }
    out
}

/// The files of `file`'s `#[cfg(test)] mod name;` declarations (a `#[path]` between them
/// followed), as paths from the repository's root: a module's tests kept in a file of their own.
fn test_modules(file: &str) -> Vec<String> {
    let text = fs::read_to_string(root().join(file)).unwrap();
    let path = Path::new(file);
    let here = path.parent().unwrap();
    let stem = path.file_stem().unwrap().to_str().unwrap();
    let dir = if matches!(stem, "mod" | "lib" | "main") {
        here.to_path_buf()
    } else {
        here.join(stem)
    };
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if *l != "#[cfg(test)]" {
            continue;
        }
        let mut k = i + 1;
        let mut at = None;
        if let Some(p) = lines.get(k).and_then(|l| l.strip_prefix("#[path = \"")) {
            at = Some(here.join(p.trim_end_matches("\"]")));
            k += 1;
        }
        let Some(name) = lines.get(k).and_then(|l| {
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            l.strip_prefix("mod ")?.strip_suffix(';')
        }) else {
            continue;
        };
        let file = at.unwrap_or_else(|| {
            let flat = dir.join(format!("{name}.rs"));
            if root().join(&flat).exists() {
                flat
            } else {
                dir.join(name).join("mod.rs")
            }
        });
        out.push(file.to_string_lossy().into_owned());
    }
    out
}

/// The guard's own readers find what they look for.
#[test]
fn test_modules_are_found() {
    let mut found = rust_files("src")
        .iter()
        .flat_map(|p| test_modules(p))
        .collect::<Vec<_>>();
    found.sort();
    for f in [
        "src/observe/history/lanes_tests.rs",
        "src/ops/policy/fixture.rs",
        "src/store/moving/tests.rs",
        "src/team/transcript/tests.rs",
    ] {
        assert!(found.iter().any(|p| p == f), "{f} in {found:?}");
    }
    assert!(found.iter().all(|p| root().join(p).is_file()), "{found:?}");
}

/// A test over the limit is found, one under it or a helper is not.
#[test]
fn long_tests_are_found() {
    let short = "#[test]\nfn a() {\n    x();\n}\n";
    let long = format!(
        "    #[test]\n    fn b() {{\n{}    }}\n",
        "        x();\n".repeat(3)
    );
    assert!(long_tests("f.rs", short, 3).is_empty());
    assert_eq!(long_tests("f.rs", &long, 4), ["f.rs:2 fn b (5 lines)"]);
    // Not a test: not counted.
    assert!(long_tests("f.rs", &long.replace("#[test]", "#[allow(x)]"), 4).is_empty());
}

/// Tests in rooms (docs/development.md, "Tests"): no test file over 900 lines (the suites and
/// their fixtures under `tests/`, the drivers of the real client, a module's tests kept in a
/// file of their own under `src/`), no test function over 150 lines anywhere.
#[test]
fn tests_stay_in_rooms() {
    let mut files = rust_files("tests");
    for dir in ["tests/e2e", "tests/peer"] {
        for e in fs::read_dir(root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "js") {
                files.push(
                    p.strip_prefix(root())
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    let src = rust_files("src");
    files.extend(src.iter().flat_map(|p| test_modules(p)));
    let big: Vec<String> = files
        .iter()
        .filter_map(|p| {
            let n = fs::read_to_string(root().join(p)).unwrap().lines().count();
            (n > 900).then(|| format!("{p} ({n} lines)"))
        })
        .collect();
    assert!(
        big.is_empty(),
        "test files over 900 lines (split them by topic): {big:?}"
    );
    let long: Vec<String> = rust_files("tests")
        .iter()
        .chain(&src)
        .flat_map(|p| long_tests(p, &fs::read_to_string(root().join(p)).unwrap(), 150))
        .collect();
    assert!(
        long.is_empty(),
        "test functions over 150 lines (make them two tests, or a helper): {long:?}"
    );
}
