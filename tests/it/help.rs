//! Every verb's help, short and long: its own options first and the global ones last; `-h` fits
//! a screen; and what is laid out by hand (the chat's commands, examples) keeps its lines in
//! `--help`, the man pages and docs/commands.

use std::path::Path;

use crate::common::TestEnv;

/// The most lines a verb's or subcommand's `-h` may take, at [`COLUMNS`] columns: one line per
/// flag, the long text only in `--help`.
const SHORT_HELP_LINES: usize = 60;

/// The terminal width the help is read at.
const COLUMNS: &str = "100";

/// The names under a help text's `Commands:` heading.
fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

/// The headings of a help text's blocks of options (`X:` whose next line is a flag as clap
/// draws one: `  -x, --long` or `      --long`, not the `  --long` of a text after them).
fn option_headings(help: &str) -> Vec<String> {
    let lines: Vec<&str> = help.lines().collect();
    lines
        .windows(2)
        .filter(|w| {
            let flag = w[1].starts_with("      --")
                || (w[1].starts_with("  -") && !w[1].starts_with("  --"));
            w[0].ends_with(':') && !w[0].starts_with(' ') && flag
        })
        .map(|w| w[0].trim_end_matches(':').to_owned())
        .collect()
}

fn help(env: &TestEnv, words: &[&str], flag: &str) -> String {
    let out = env
        .cmd()
        .args(words)
        .arg(flag)
        .env("COLUMNS", COLUMNS)
        .output()
        .unwrap();
    assert!(out.status.success(), "{words:?} {flag}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Every verb and subcommand, as the words that name it (`["tasks", "add"]`).
fn every_command(env: &TestEnv) -> Vec<Vec<String>> {
    let verbs = commands(&help(env, &[], "--help"));
    assert!(verbs.len() > 20, "{verbs:?}");
    let mut found = Vec::new();
    let mut paths: Vec<Vec<String>> = verbs.into_iter().map(|v| vec![v]).collect();
    while let Some(path) = paths.pop() {
        let words: Vec<&str> = path.iter().map(String::as_str).collect();
        for sub in commands(&help(env, &words, "--help")) {
            let mut deeper = path.clone();
            deeper.push(sub);
            paths.push(deeper);
        }
        found.push(path);
    }
    found
}

#[test]
fn every_verb_lists_its_global_options_last() {
    let env = TestEnv::new();
    let mut checked = 0;
    for path in every_command(&env) {
        let words: Vec<&str> = path.iter().map(String::as_str).collect();
        for flag in ["--help", "-h"] {
            let text = help(&env, &words, flag);
            let headings = option_headings(&text);
            assert_eq!(
                headings.last().map(String::as_str),
                Some("Global options"),
                "`teamctl {} {flag}` lists {headings:?}",
                words.join(" ")
            );
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked}");
}

#[test]
fn every_short_help_fits_a_screen() {
    let env = TestEnv::new();
    let mut long = Vec::new();
    for path in every_command(&env) {
        let words: Vec<&str> = path.iter().map(String::as_str).collect();
        let lines = help(&env, &words, "-h").lines().count();
        if lines > SHORT_HELP_LINES {
            long.push(format!("`teamctl {} -h`: {lines} lines", words.join(" ")));
        }
    }
    assert!(
        long.is_empty(),
        "at most {SHORT_HELP_LINES} lines at {COLUMNS} columns (one line per flag; the long \
         text goes to long_help, shown by --help): {long:?}"
    );
}

/// The blocks laid out by hand in a `--help`: in the description (before `Usage:`) and in the
/// text after the options, runs of lines indented by two spaces. Each block is a list of its
/// items: a line at the block's indent with the deeper-indented lines that continue it, its
/// spaces collapsed.
fn verbatim_blocks(help: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = help.lines().collect();
    let usage = lines
        .iter()
        .position(|l| l.starts_with("Usage:"))
        .unwrap_or(0);
    let globals = lines.iter().position(|l| *l == "Global options:");
    let after = globals.and_then(|g| {
        (g + 1..lines.len()).find(|&i| !lines[i].is_empty() && !lines[i].starts_with(' '))
    });
    let parts = [&lines[..usage], after.map_or(&[][..], |a| &lines[a..])];
    let mut blocks = Vec::new();
    for part in parts {
        for block in part.split(|l| !l.starts_with("  ")) {
            let Some(indent) = block.iter().map(|l| l.len() - l.trim_start().len()).min() else {
                continue;
            };
            let mut items: Vec<String> = Vec::new();
            for line in block {
                let deeper = line.len() - line.trim_start().len() > indent;
                match items.last_mut() {
                    Some(item) if deeper => {
                        item.push(' ');
                        item.push_str(&collapse(line));
                    }
                    _ => items.push(collapse(line)),
                }
            }
            blocks.push(items);
        }
    }
    blocks
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A generated page as plain lines: Markdown's escapes (`\[`) and roff's (`\-`, `\*(Aq`) undone,
/// spaces collapsed.
fn plain_lines(page: &str) -> Vec<String> {
    let page = page
        .replace("\\*(Aq", "'")
        .replace("\\(aq", "'")
        .replace("\\&", "")
        .replace("\\e", "\\");
    let mut out = Vec::new();
    for line in page.lines() {
        let mut plain = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\\' && chars.peek().is_some_and(char::is_ascii_punctuation) {
                plain.push(chars.next().unwrap());
            } else {
                plain.push(c);
            }
        }
        out.push(collapse(&plain));
    }
    out
}

/// `--help` keeps a verbatim block's lines; the man page and docs/commands must too. Two items
/// of a block found on one line of a page ran together (as a paragraph). clap also joins the
/// lines of a doc comment, so a doc comment in src/cli has no indented lines: a verbatim block
/// goes in an explicit `long_about` or `after_long_help`.
#[test]
fn verbatim_blocks_keep_their_lines() {
    let env = TestEnv::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut joined = Vec::new();
    for path in every_command(&env) {
        let words: Vec<&str> = path.iter().map(String::as_str).collect();
        let text = help(&env, &words, "--help");
        let name = words.join("-");
        let pages = [
            format!("man/man1/teamctl-{name}.1"),
            format!("docs/commands/{name}.md"),
        ];
        for page in pages {
            let lines = plain_lines(&std::fs::read_to_string(root.join(&page)).unwrap());
            for block in verbatim_blocks(&text) {
                for pair in block.windows(2) {
                    let both = format!("{} {}", pair[0], pair[1]);
                    if lines.iter().any(|l| l.contains(&both)) {
                        joined.push(format!("{page}: {both:?}"));
                    }
                }
            }
        }
    }
    assert!(
        joined.is_empty(),
        "verbatim lines run together: {joined:#?}"
    );
    let mut indented = Vec::new();
    doc_comments_with_indented_lines(&root.join("src/cli"), &mut indented);
    assert!(
        indented.is_empty(),
        "clap joins a doc comment's lines into a paragraph: lay these out in an explicit \
         long_about or after_long_help: {indented:#?}"
    );
}

/// `///` lines indented past the one space after the slashes, in every .rs file under `dir`.
fn doc_comments_with_indented_lines(dir: &Path, found: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            doc_comments_with_indented_lines(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                let doc = line.trim_start().strip_prefix("///");
                if doc.is_some_and(|d| d.starts_with("  ") && !d.trim().is_empty()) {
                    found.push(format!("{}:{}", path.display(), n + 1));
                }
            }
        }
    }
}
