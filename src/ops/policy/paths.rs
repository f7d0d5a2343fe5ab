//! Path rules (`Read(…)`, `Edit(…)`): gitignore-style patterns, their four anchors, and the
//! file a tool call touches, normalised without touching the file system.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// Where a teammate's relative paths are anchored.
#[derive(Debug, Clone, Default)]
pub struct Anchors {
    /// The teammate's working directory (its `cwd` in `config.json`).
    pub cwd: Option<PathBuf>,
    /// The home directory `~/` means.
    pub home: Option<PathBuf>,
}

/// A gitignore-style path pattern with its anchor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PathPattern {
    anchor: PathAnchor,
    /// Slash-separated glob segments (`**` matches any number of segments).
    segments: Vec<String>,
    /// No slash in the pattern: matches a name at any depth below the anchor.
    floating: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum PathAnchor {
    Root,
    Home,
    Cwd,
}

impl PathPattern {
    pub(super) fn parse(spec: &str) -> std::result::Result<PathPattern, String> {
        let (anchor, rest, anchored) = if let Some(r) = spec.strip_prefix("//") {
            (PathAnchor::Root, r, true)
        } else if let Some(r) = spec.strip_prefix("~/") {
            (PathAnchor::Home, r, true)
        } else if let Some(r) = spec.strip_prefix("./") {
            (PathAnchor::Cwd, r, true)
        } else if let Some(r) = spec.strip_prefix('/') {
            (PathAnchor::Cwd, r, true)
        } else if spec == "~" {
            (PathAnchor::Home, "", true)
        } else {
            (PathAnchor::Cwd, spec, false)
        };
        let trimmed = rest.trim_end_matches('/');
        let floating = !anchored && !trimmed.contains('/');
        let segments: Vec<String> = trimmed
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .map(String::from)
            .collect();
        if segments.iter().any(|s| s == "..") {
            return Err("\"..\" in a path pattern".into());
        }
        if segments.is_empty() && anchor == PathAnchor::Cwd && !anchored {
            return Err("an empty path".into());
        }
        Ok(PathPattern {
            anchor,
            segments,
            floating,
        })
    }

    pub(super) fn matches(&self, path: &Path, anchors: &Anchors) -> bool {
        let base = match self.anchor {
            PathAnchor::Root => Some(PathBuf::from("/")),
            PathAnchor::Home => anchors.home.clone(),
            PathAnchor::Cwd => anchors.cwd.clone(),
        };
        let Some(base) = base.map(|b| normalize(&b)) else {
            return false;
        };
        let Ok(rel) = path.strip_prefix(&base) else {
            return false;
        };
        let comps: Vec<&str> = rel
            .components()
            .filter_map(|c| c.as_os_str().to_str())
            .collect();
        if self.segments.is_empty() {
            return true;
        }
        if self.floating {
            return comps
                .iter()
                .any(|c| segment_match(self.segments[0].as_bytes(), c.as_bytes()));
        }
        let pat: Vec<&str> = self.segments.iter().map(String::as_str).collect();
        (1..=comps.len()).any(|k| segments_match(&pat, &comps[..k]))
    }
}

fn segments_match(p: &[&str], s: &[&str]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some(&"**") => (0..=s.len()).any(|k| segments_match(&p[1..], &s[k..])),
        Some(seg) => {
            !s.is_empty()
                && segment_match(seg.as_bytes(), s[0].as_bytes())
                && segments_match(&p[1..], &s[1..])
        }
    }
}

/// One path segment: `*` any run, `?` one character, `[abc]`/`[a-z]`/`[!x]` a class.
fn segment_match(p: &[u8], s: &[u8]) -> bool {
    if p.is_empty() {
        return s.is_empty();
    }
    match p[0] {
        b'*' => (0..=s.len()).any(|k| segment_match(&p[1..], &s[k..])),
        b'?' => !s.is_empty() && segment_match(&p[1..], &s[1..]),
        b'[' => {
            let Some(close) = p.iter().skip(2).position(|&c| c == b']').map(|i| i + 2) else {
                return !s.is_empty() && s[0] == b'[' && segment_match(&p[1..], &s[1..]);
            };
            if s.is_empty() {
                return false;
            }
            let mut class = &p[1..close];
            let negate = matches!(class.first(), Some(b'!') | Some(b'^'));
            if negate {
                class = &class[1..];
            }
            let mut hit = false;
            let mut i = 0;
            while i < class.len() {
                if i + 2 < class.len() && class[i + 1] == b'-' {
                    hit |= class[i] <= s[0] && s[0] <= class[i + 2];
                    i += 3;
                } else {
                    hit |= class[i] == s[0];
                    i += 1;
                }
            }
            hit != negate && segment_match(&p[close + 1..], &s[1..])
        }
        b'\\' if p.len() > 1 => !s.is_empty() && s[0] == p[1] && segment_match(&p[2..], &s[1..]),
        c => !s.is_empty() && s[0] == c && segment_match(&p[1..], &s[1..]),
    }
}

/// `.` and `..` removed without touching the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// The file a tool call touches, absolute (relative input is taken from the teammate's cwd).
pub(super) fn request_path(tool: &str, input: &Value, anchors: &Anchors) -> Option<PathBuf> {
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    let raw = match tool {
        "NotebookEdit" | "NotebookRead" => s("notebook_path"),
        "Grep" | "Glob" | "LS" => s("path").or(Some(".")),
        _ => s("file_path"),
    }?;
    let p = Path::new(raw);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        anchors.cwd.as_ref()?.join(p)
    };
    Some(normalize(&abs))
}

#[cfg(test)]
mod tests {
    use super::Anchors;
    use crate::ops::policy::Answer;
    use crate::ops::policy::fixture::{anchors, path, perm, policy};
    use serde_json::json;

    #[test]
    fn path_rules_relative_to_the_teammates_cwd() {
        let p = policy(&["Edit(src/**)", "Read(./docs/**)"], &[]);
        assert_eq!(path(&p, "Edit", "/w/proj/src/a/b.rs"), Answer::Approve);
        assert_eq!(
            path(&p, "Write", "/w/proj/src/new.rs"),
            Answer::Approve,
            "Edit covers Write"
        );
        assert_eq!(path(&p, "MultiEdit", "/w/proj/src/x.rs"), Answer::Approve);
        assert_eq!(path(&p, "Edit", "/w/proj/lib/a.rs"), Answer::Leave);
        assert_eq!(path(&p, "Edit", "/w/other/src/a.rs"), Answer::Leave);
        assert_eq!(
            path(&p, "Edit", "/w/proj/x/src/a.rs"),
            Answer::Leave,
            "anchored"
        );
        assert_eq!(path(&p, "Read", "/w/proj/docs/guide.md"), Answer::Approve);
        assert_eq!(path(&p, "Edit", "/w/proj/docs/guide.md"), Answer::Leave);
        assert_eq!(
            path(&p, "Read", "/w/proj/src/../docs/a.md"),
            Answer::Approve
        );
        assert_eq!(
            path(&p, "Read", "docs/rel.md"),
            Answer::Approve,
            "relative input"
        );
        let grep = p.decide(
            &perm("Grep", json!({"pattern": "x", "path": "/w/proj/docs"})),
            &anchors(),
        );
        assert_eq!(grep.answer, Answer::Approve, "Read covers Grep");
        // `/x` is the project root (the cwd), not the file system root.
        let p = policy(&["Edit(/src/*.rs)"], &[]);
        assert_eq!(path(&p, "Edit", "/w/proj/src/a.rs"), Answer::Approve);
        assert_eq!(path(&p, "Edit", "/src/a.rs"), Answer::Leave);
        assert_eq!(
            path(&p, "Edit", "/w/proj/src/sub/a.rs"),
            Answer::Leave,
            "* stays in a segment"
        );
    }

    #[test]
    fn path_rules_absolute_home_and_floating() {
        let p = policy(
            &["Read(//etc/**)", "Read(~/notes.md)"],
            &["Read(*.env)", "Edit(secrets)"],
        );
        assert_eq!(path(&p, "Read", "/etc/hosts"), Answer::Approve);
        assert_eq!(path(&p, "Read", "/home/u/notes.md"), Answer::Approve);
        assert_eq!(path(&p, "Read", "/w/proj/notes.md"), Answer::Leave);
        // No slash: any depth below the cwd.
        assert_eq!(
            path(&p, "Read", "/w/proj/.env"),
            Answer::Deny,
            "gitignore: * matches a dot"
        );
        assert_eq!(path(&p, "Read", "/w/proj/a/b/prod.env"), Answer::Deny);
        // A directory matched covers what is inside it.
        assert_eq!(path(&p, "Edit", "/w/proj/x/secrets/key.pem"), Answer::Deny);
        assert_eq!(path(&p, "Edit", "/w/proj/secretsx"), Answer::Leave);
        // Classes and ?.
        let p = policy(&["Edit(src/[ab]?.rs)"], &[]);
        assert_eq!(path(&p, "Edit", "/w/proj/src/a1.rs"), Answer::Approve);
        assert_eq!(path(&p, "Edit", "/w/proj/src/c1.rs"), Answer::Leave);
        // Without a known cwd, relative rules match nothing.
        let p = policy(&["Edit(src/**)"], &[]);
        let d = p.decide(
            &perm("Edit", json!({"file_path": "/w/proj/src/a"})),
            &Anchors::default(),
        );
        assert_eq!(d.answer, Answer::Leave);
    }
}
