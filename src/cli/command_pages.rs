//! The command reference as GitHub Markdown (`docs/commands/`), generated from the clap
//! definition as the man pages are, and checked by the same test (`generated_files_are_current`).
//!
//! Hand-written rather than clap-markdown (0.1.5), which shows no env vars, writes one document
//! for all commands, and pastes the plain-text help into Markdown unescaped (`<TEAM>` vanishes on
//! GitHub). The help is plain text for a terminal, with code in backticks; here each paragraph
//! keeps its code spans and escapes Markdown's special characters around them, and the sections
//! of `after_long_help` ("Examples:", "Exit codes:", …: a title line, an indented body) become
//! headings: examples a shell block, two-column bodies a table.

use std::fmt::Write as _;

use clap::{Arg, Command};

/// The pages for `root` and every subcommand: `(file name, contents)`, the index `README.md`
/// first, then `<verb>.md` and `<verb>-<sub>.md` for nested verbs.
pub(crate) fn pages(mut root: Command) -> Vec<(String, String)> {
    root.build();
    let mut pages = vec![("README.md".to_owned(), index(&root))];
    for sub in visible(&root) {
        pages.push((format!("{}.md", sub.get_name()), page(&root, sub, &[])));
        for nested in visible(sub) {
            let path = [sub.get_name()];
            pages.push((
                format!("{}-{}.md", sub.get_name(), nested.get_name()),
                page(&root, nested, &path),
            ));
        }
    }
    pages
}

fn visible(cmd: &Command) -> impl Iterator<Item = &Command> {
    cmd.get_subcommands().filter(|c| !c.is_hide_set())
}

/// The file a command's page is in: `send.md`, `tasks-add.md`.
fn file_of(path: &[&str]) -> String {
    format!("{}.md", path.join("-"))
}

fn index(root: &Command) -> String {
    let name = root.get_name();
    let mut md = String::new();
    let _ = writeln!(md, "# {name} command reference\n");
    let _ = writeln!(
        md,
        "Generated from the clap definition by `TEAMCTL_BLESS=1 cargo test generated`, like the \
         man pages (`man {name}`) and `{name} <command> --help`; do not edit by hand.\n"
    );
    long_about(&mut md, root);
    let _ = writeln!(md, "## Usage\n\n```text\n{}\n```\n", usage(root));
    let _ = writeln!(md, "## Commands\n");
    let _ = writeln!(md, "| command | what it does |\n|---|---|");
    for sub in visible(root) {
        row(&mut md, &[sub.get_name()], sub);
        for nested in visible(sub) {
            row(&mut md, &[sub.get_name(), nested.get_name()], nested);
        }
    }
    md.push('\n');
    let _ = writeln!(md, "## Global options\n");
    let _ = writeln!(md, "Every command takes these, before or after its name.\n");
    for arg in root
        .get_arguments()
        .filter(|a| shown(a) && a.is_global_set())
    {
        option(&mut md, arg);
    }
    md.push('\n');
    after_help(&mut md, root);
    trim_end(md)
}

fn row(md: &mut String, path: &[&str], cmd: &Command) {
    let about = cmd.get_about().map(|s| s.to_string()).unwrap_or_default();
    let _ = writeln!(
        md,
        "| [`teamctl {}`]({}) | {} |",
        path.join(" "),
        file_of(path),
        cell(&about)
    );
}

fn page(root: &Command, cmd: &Command, parents: &[&str]) -> String {
    let mut path: Vec<&str> = parents.to_vec();
    path.push(cmd.get_name());
    let mut md = String::new();
    let _ = writeln!(md, "# {} {}\n", root.get_name(), path.join(" "));
    long_about(&mut md, cmd);
    let _ = writeln!(md, "## Usage\n\n```text\n{}\n```\n", usage(cmd));

    let subs: Vec<_> = visible(cmd).collect();
    if !subs.is_empty() {
        let _ = writeln!(md, "## Commands\n");
        for sub in subs {
            let mut p = path.clone();
            p.push(sub.get_name());
            let about = sub.get_about().map(|s| s.to_string()).unwrap_or_default();
            let _ = writeln!(
                md,
                "- [`{} {}`]({}): {}",
                root.get_name(),
                p.join(" "),
                file_of(&p),
                text(&about)
            );
        }
        md.push('\n');
    }

    let positionals: Vec<_> = cmd.get_positionals().filter(|a| shown(a)).collect();
    if !positionals.is_empty() {
        let _ = writeln!(md, "## Arguments\n");
        for arg in positionals {
            option(&mut md, arg);
        }
        md.push('\n');
    }
    let options: Vec<_> = cmd
        .get_arguments()
        .filter(|a| shown(a) && !a.is_positional() && !a.is_global_set())
        .collect();
    if !options.is_empty() {
        let _ = writeln!(md, "## Options\n");
        for arg in options {
            option(&mut md, arg);
        }
        md.push('\n');
    }
    let globals: Vec<_> = root
        .get_arguments()
        .filter(|a| shown(a) && a.is_global_set())
        .map(|a| format!("`--{}`", a.get_long().unwrap_or_default()))
        .collect();
    let _ = writeln!(
        md,
        "The [global options](README.md#global-options) apply too: {}.\n",
        globals.join(", ")
    );
    after_help(&mut md, cmd);
    if !md.contains("\n## Exit codes\n") {
        let _ = writeln!(
            md,
            "## Exit codes\n\n0 on success; otherwise [the exit codes of every command](README.md#exit-codes).\n"
        );
    }
    trim_end(md)
}

/// A flag or argument worth documenting: not hidden, not clap's own `--help`/`--version`.
fn shown(arg: &Arg) -> bool {
    !arg.is_hide_set() && !matches!(arg.get_id().as_str(), "help" | "version")
}

fn usage(cmd: &Command) -> String {
    let usage = cmd.clone().render_usage().to_string();
    let usage = usage.strip_prefix("Usage: ").unwrap_or(&usage);
    // clap indents the further forms under "Usage: "; the code block needs no indent.
    usage.lines().map(str::trim).collect::<Vec<_>>().join("\n")
}

/// The first paragraph of the long about is the short about; each paragraph becomes one, but
/// lines laid out by hand (indented: the chat's commands) keep their lines in a text block.
fn long_about(md: &mut String, cmd: &Command) {
    let about = cmd
        .get_long_about()
        .or(cmd.get_about())
        .map(|s| s.to_string())
        .unwrap_or_default();
    for para in about.split("\n\n").filter(|p| !p.trim().is_empty()) {
        let lines: Vec<&str> = para.lines().collect();
        if lines.iter().all(|l| l.starts_with(char::is_whitespace)) {
            let indent = lines.iter().map(|l| l.len() - l.trim_start().len()).min();
            let lines: Vec<&str> = lines.iter().map(|l| &l[indent.unwrap_or(0)..]).collect();
            verbatim(md, &lines);
        } else {
            let _ = writeln!(md, "{}\n", text(&para.replace('\n', " ")));
        }
    }
}

/// One list item: the flag as typed, its help, then its values, default and env var.
fn option(md: &mut String, arg: &Arg) {
    let mut facts = Vec::new();
    let values: Vec<String> = if arg.is_hide_possible_values_set() {
        Vec::new()
    } else {
        arg.get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| format!("`{}`", v.get_name()))
            .collect()
    };
    if !values.is_empty() && arg.get_action().takes_values() {
        facts.push(format!("Values: {}.", values.join(", ")));
    }
    // As clap's help: a flag's default (`false`) goes without saying.
    if !arg.is_hide_default_value_set()
        && !arg.get_default_values().is_empty()
        && arg.get_action().takes_values()
    {
        let d: Vec<_> = arg
            .get_default_values()
            .iter()
            .map(|v| format!("`{}`", v.to_string_lossy()))
            .collect();
        facts.push(format!("Default: {}.", d.join(", ")));
    }
    if let Some(env) = arg.get_env().filter(|_| !arg.is_hide_env_set()) {
        facts.push(format!("Env: `{}`.", env.to_string_lossy()));
    }
    let help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(|s| s.to_string())
        .unwrap_or_default();
    let mut paras = help.split("\n\n").map(|p| text(&p.replace('\n', " ")));
    let first = paras.next().unwrap_or_default();
    let mut item = format!("- `{}`: {}", spelling(arg), first);
    for p in paras {
        let _ = write!(item, "\n\n  {p}");
    }
    if !facts.is_empty() {
        // A backslash at the end of a line is a line break in GitHub Markdown.
        let _ = write!(item, "\\\n  {}", facts.join(" "));
    }
    let _ = writeln!(md, "{item}");
}

/// How the flag is typed: `-s, --long <VALUE>`, `--wait[=<DURATION>]`, `<TEAM>`, `[TO]`.
fn spelling(arg: &Arg) -> String {
    let names: Vec<String> = arg
        .get_value_names()
        .map(|n| n.iter().map(|s| s.to_string()).collect())
        .unwrap_or_else(|| vec![arg.get_id().as_str().to_uppercase()]);
    let value = names
        .iter()
        .map(|n| format!("<{n}>"))
        .collect::<Vec<_>>()
        .join(" ");
    let many = matches!(arg.get_action(), clap::ArgAction::Append)
        || arg.get_num_args().is_some_and(|n| n.max_values() > 1);
    if arg.is_positional() {
        let name = names.join(" ");
        let dots = if many { "..." } else { "" };
        return if arg.is_required_set() {
            format!("<{name}>{dots}")
        } else {
            format!("[{name}]{dots}")
        };
    }
    let mut s = match (arg.get_short(), arg.get_long()) {
        (Some(c), Some(l)) => format!("-{c}, --{l}"),
        (Some(c), None) => format!("-{c}"),
        (None, Some(l)) => format!("--{l}"),
        (None, None) => String::new(),
    };
    if arg.get_action().takes_values() {
        let dots = if many { "..." } else { "" };
        if arg.get_num_args().is_some_and(|n| n.min_values() == 0) {
            if arg.is_require_equals_set() {
                let _ = write!(s, "[={value}]");
            } else {
                let _ = write!(s, " [{value}]{dots}");
            }
        } else {
            let _ = write!(s, " {value}");
        }
    }
    s
}

/// The sections of `after_long_help`: a title line ending in ':' and an indented body. Text
/// before the first title is paragraphs.
fn after_help(md: &mut String, cmd: &Command) {
    let Some(help) = cmd.get_after_long_help().or(cmd.get_after_help()) else {
        return;
    };
    let help = help.to_string();
    let mut sections: Vec<(Option<&str>, Vec<&str>)> = vec![(None, Vec::new())];
    for line in help.lines() {
        let title = line.strip_suffix(':').filter(|t| {
            !line.starts_with(char::is_whitespace) && !t.is_empty() && !t.contains(": ")
        });
        let (current, body) = sections.last().expect("one section at least");
        let ends_body = current.is_some()
            && !line.starts_with(char::is_whitespace)
            && !line.trim().is_empty()
            && body.iter().any(|l| l.starts_with(char::is_whitespace));
        match title {
            Some(t) => sections.push((Some(t), Vec::new())),
            // Unindented text after a section's body is plain paragraphs again.
            None if ends_body => sections.push((None, vec![line])),
            None => sections.last_mut().expect("one section").1.push(line),
        }
    }
    for (title, body) in sections {
        if let Some(t) = title {
            let _ = writeln!(md, "## {t}\n");
        }
        body_md(md, title, &body);
    }
}

fn body_md(md: &mut String, title: Option<&str>, body: &[&str]) {
    let indent = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min();
    let Some(indent) = indent else { return };
    let lines: Vec<&str> = body.iter().map(|l| l.get(indent..).unwrap_or("")).collect();
    let lines = trim_blank(&lines);
    if title == Some("Examples") {
        let _ = writeln!(md, "```sh\n{}\n```\n", lines.join("\n"));
    } else if let Some(rows) = two_columns(lines) {
        let key = match title {
            Some("Exit codes") => "code",
            Some("Environment") => "variable",
            Some(t) => t.trim_end_matches('s'),
            None => "",
        };
        let _ = writeln!(md, "| {} | meaning |\n|---|---|", key.to_lowercase());
        for (key, value) in rows {
            let keys: Vec<_> = key.split(", ").map(|k| format!("`{k}`")).collect();
            let _ = writeln!(md, "| {} | {} |", keys.join(", "), cell(&value));
        }
        md.push('\n');
    } else if title.is_some() || lines.iter().any(|l| l.starts_with(char::is_whitespace)) {
        // Laid out by hand (a JSON document, the chat's commands): shown as it is.
        verbatim(md, lines);
    } else {
        for para in lines.split(|l| l.trim().is_empty()) {
            if !para.is_empty() {
                let _ = writeln!(md, "{}\n", text(&para.join(" ")));
            }
        }
    }
}

/// Lines laid out by hand, as a block that keeps them.
fn verbatim(md: &mut String, lines: &[&str]) {
    let lang = if lines[0].starts_with('{') {
        "json"
    } else {
        "text"
    };
    let _ = writeln!(md, "```{lang}\n{}\n```\n", lines.join("\n"));
}

fn trim_blank<'a>(mut lines: &'a [&'a str]) -> &'a [&'a str] {
    while lines.first().is_some_and(|l| l.trim().is_empty()) {
        lines = &lines[1..];
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines = &lines[..lines.len() - 1];
    }
    lines
}

/// Rows `KEY  text` (two spaces apart) whose further lines are indented deeper, or `None`.
fn two_columns(lines: &[&str]) -> Option<Vec<(String, String)>> {
    let mut rows: Vec<(String, String)> = Vec::new();
    for line in lines {
        if line.trim().is_empty() {
            return None;
        }
        if line.starts_with(char::is_whitespace) {
            let (_, value) = rows.last_mut()?;
            value.push(' ');
            value.push_str(line.trim());
        } else {
            let (key, value) = line.split_once("  ")?;
            rows.push((key.to_owned(), value.trim().to_owned()));
        }
    }
    (!rows.is_empty()).then_some(rows)
}

/// Plain help text as Markdown: code spans (between backticks) kept, and outside them every
/// character Markdown would act on escaped, so the page shows what `--help` shows.
fn text(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find('`') {
        let Some(len) = rest[start + 1..].find('`') else {
            break;
        };
        out.push_str(&link_docs(&escape(&rest[..start])));
        out.push_str(&rest[start..start + len + 2]);
        rest = &rest[start + len + 2..];
    }
    out.push_str(&link_docs(&escape(rest)));
    out
}

/// `docs/design.md` in the help becomes a link to that page, and `docs/design.md, "Heading"` a
/// link to that heading (so the link test checks the help's references too).
fn link_docs(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find("docs/") {
        let after = &rest[at + 5..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(after.len());
        let (name, tail) = after.split_at(name_len);
        let Some(tail) = tail.strip_prefix(".md").filter(|_| !name.is_empty()) else {
            out.push_str(&rest[..at + 5]);
            rest = after;
            continue;
        };
        out.push_str(&rest[..at]);
        let heading = tail
            .strip_prefix(", \"")
            .and_then(|t| t.find('"').map(|end| &t[..end]));
        match heading {
            Some(h) => {
                let _ = write!(
                    out,
                    "[docs/{name}.md, \"{h}\"](../{name}.md#{})",
                    slug(&h.replace('\\', ""))
                );
                rest = &tail[h.len() + 4..];
            }
            None => {
                let _ = write!(out, "[docs/{name}.md](../{name}.md)");
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// GitHub's anchor for a heading: lower case, spaces to '-', punctuation other than '-' and
/// '_' dropped.
pub(crate) fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn escape(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let word = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(|c| c.is_alphanumeric())
        };
        let special = match c {
            '\\' | '*' | '<' | '>' | '[' | ']' | '`' | '~' | '$' | '|' => true,
            // Within a word (schema_version) an underscore is plain text already.
            '_' => !(word(i.checked_sub(1)) && word(Some(i + 1))),
            '#' | '+' | '-' | '=' => i == 0,
            _ => false,
        };
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Text for a table cell: a `|` ends the cell even inside a code span unless escaped.
fn cell(s: &str) -> String {
    text(s).replace('|', "\\|").replace("\\\\|", "\\|")
}

fn trim_end(mut md: String) -> String {
    while md.ends_with("\n\n") {
        md.pop();
    }
    md
}
