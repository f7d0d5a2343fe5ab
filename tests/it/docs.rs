//! The documentation holds together: every relative link in `README.md` and `docs/**/*.md`
//! leads to a file that exists, every `#anchor` to a heading of that page (GitHub's rules), and
//! every struct `docs/json.md` names is declared in the file it points at. No network: links
//! with a scheme (`https:`, `mailto:`) are not followed.

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

/// docs/development.md's map ("Where things go") names every module of the library and the
/// binary's own helpers (a verb's file is named by its verb page, a pane of `top` by the
/// render folder): a newcomer finds each room from it.
#[test]
fn the_development_map_names_every_module() {
    let doc = fs::read_to_string(root().join("docs/development.md")).unwrap();
    let map = &doc[doc.find("## Where things go").expect("the map's heading")..];
    let words: std::collections::HashSet<&str> = map
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join("src"), &mut files);
    let mut missing: Vec<String> = files
        .iter()
        .map(|p| {
            p.strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|p| !p.starts_with("src/cli/cmd/") && !p.starts_with("src/cli/tui/render/"))
        .filter(|p| {
            let stem = Path::new(p).file_stem().unwrap().to_str().unwrap();
            !matches!(stem, "mod" | "tests" | "fixture") && !words.contains(stem)
        })
        .collect();
    missing.sort();
    assert!(
        missing.is_empty(),
        "docs/development.md's map does not name: {missing:?}"
    );
}
