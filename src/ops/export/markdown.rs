//! `report.md`: a record for people, as GitHub-flavoured Markdown that can be appended to
//! `$GITHUB_STEP_SUMMARY` as it is.
//!
//! Teammate text never becomes Markdown or HTML: a short field (a name, a subject, a summary, a
//! table cell) has every ASCII punctuation character backslash-escaped (so no emphasis, link,
//! autolink, mention, emoji code, HTML tag or table pipe), line breaks turned into spaces; a
//! message's text goes into a fenced code block whose fence is longer than any run of backticks
//! in it. In both, control characters (C0 but newline in a block, DEL, C1, the bidi controls,
//! the line and paragraph separators) are written as visible escapes such as `\u{1b}`. The report
//! stays under GitHub's 1 MiB limit for a step summary: long texts are cut, and past
//! [`BUDGET`] the remaining texts are left to `summary.json`.

use std::fmt::Write as _;

use chrono::{DateTime, SecondsFormat, Utc};

use crate::observe::spend::CostSource;
use crate::ops::export::summary::{Message, MessageState, Summary};
use crate::team::transcript::Tokens;
use crate::text::is_control;
use crate::units::{self, count};

/// The size the report keeps under (GitHub refuses a step summary over 1 MiB).
pub const BUDGET: usize = 900 * 1024;

/// The most of one message's text the report shows (characters).
pub const TEXT_MAX: usize = 4000;

fn visible(c: char) -> String {
    format!("\\u{{{:x}}}", c as u32)
}

/// Untrusted text as one inline run: at most `max` characters (then `…`), line breaks and tabs
/// as spaces, controls as visible escapes, every ASCII punctuation character escaped.
pub fn inline(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for (n, c) in text.trim().chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if is_control(c) => {
                for v in visible(c).chars() {
                    push_escaped(&mut out, v);
                }
            }
            c => push_escaped(&mut out, c),
        }
    }
    if out.is_empty() { "—".into() } else { out }
}

fn push_escaped(out: &mut String, c: char) {
    if c.is_ascii_punctuation() {
        out.push('\\');
    }
    out.push(c);
}

/// Untrusted text as a fenced code block (at most `max` characters, then a note), ending in a
/// newline.
pub fn fenced(text: &str, max: usize) -> String {
    let mut body = String::with_capacity(text.len() + 8);
    let mut cut = 0;
    for (n, c) in text.chars().enumerate() {
        if n == max {
            cut = text.chars().count() - max;
            break;
        }
        match c {
            '\n' | '\t' => body.push(c),
            c if is_control(c) => body.push_str(&visible(c)),
            c => body.push(c),
        }
    }
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    let mut out = format!("{fence}text\n{body}");
    if !body.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&fence);
    out.push('\n');
    if cut > 0 {
        let _ = writeln!(
            out,
            "\n*({cut} more characters: the whole text is in summary.json)*"
        );
    }
    out
}

/// An RFC 3339 time as `2026-12-01 03:29:42`, or the untrusted text escaped.
fn time(t: Option<&str>) -> String {
    match t.map(|t| (t, DateTime::parse_from_rfc3339(t))) {
        Some((_, Ok(d))) => d
            .with_timezone(&Utc)
            .format("%Y-%m-%d %H:%M:%S")
            .to_string(),
        Some((t, Err(_))) => inline(t, 40),
        None => "—".into(),
    }
}

fn opt(v: Option<&str>, max: usize) -> String {
    v.map_or_else(|| "—".into(), |s| inline(s, max))
}

fn row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

fn header(names: &[&str]) -> String {
    let mut s = row(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>());
    s.push_str(&row(&vec!["---".to_string(); names.len()]));
    s
}

/// The report for `s`.
pub fn render(s: &Summary) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "## Team record: {}\n", inline(&s.team, 128));
    let generated = DateTime::parse_from_rfc3339(&s.generated_at)
        .map(|d| {
            d.with_timezone(&Utc)
                .to_rfc3339_opts(SecondsFormat::Secs, true)
        })
        .unwrap_or_else(|_| s.generated_at.clone());
    let _ = write!(
        md,
        "Exported {} by {}.",
        inline(&generated, 40),
        inline(&s.generator, 40)
    );
    if !s.team_folder {
        md.push_str(" The team's folder was already gone: its members, inboxes and config are not in this record.");
    }
    md.push_str("\n\n");
    if let Some(r) = &s.run {
        let _ = write!(
            md,
            "Run {}: **{}**",
            inline(&r.name, 64),
            inline(&r.state, 20)
        );
        match &r.reason {
            Some(why) => {
                let first = why.lines().next().unwrap_or("");
                let _ = writeln!(md, ": {}\n", inline(first, 300));
            }
            None => md.push_str("\n\n"),
        }
    }

    let t = &s.status.team;
    let lead = t.lead_agent_id.as_deref();
    let n = &s.status.tasks;
    let _ = writeln!(
        md,
        "Lead {}, {} member(s), {} message(s); tasks: {} completed, {} in progress, {} pending.\n",
        opt(lead, 100),
        s.status.members.iter().filter(|m| m.in_config).count(),
        s.messages.len(),
        n.completed,
        n.in_progress,
        n.pending
    );

    if let Some(text) = &s.result {
        md.push_str(if s.result_final {
            "### Final answer\n\n"
        } else {
            "### The lead's last answer (its turn had not ended)\n\n"
        });
        md.push_str(&fenced(text, TEXT_MAX * 4));
        md.push('\n');
    }

    md.push_str("### Members\n\n");
    if s.status.members.is_empty() {
        md.push_str("No members on record.\n\n");
    } else {
        md.push_str(&header(&[
            "Member",
            "Type",
            "Backend",
            "State",
            "Last event",
            "Unread",
            "Tasks open",
            "Tokens in / out / cache read / cache write",
            "Cost",
        ]));
        for m in &s.status.members {
            md.push_str(&row(&[
                inline(&m.name, 64),
                opt(m.agent_type.as_deref(), 40),
                opt(m.backend.as_deref(), 20),
                m.state.to_string(),
                match (&m.last_event_at, &m.last_event_kind) {
                    (at, Some(kind)) if at.is_some() => {
                        format!("{} ({})", time(at.as_deref()), inline(kind, 40))
                    }
                    (_, Some(kind)) => inline(kind, 40),
                    _ => "—".into(),
                },
                m.pending.to_string(),
                m.tasks_owned.to_string(),
                m.tokens.as_ref().map_or("—".into(), tokens),
                cost(m.cost_usd, m.cost_source, m.tokens.is_some()),
            ]));
        }
        md.push('\n');
    }
    match &s.cost {
        Some(c) => {
            let _ = writeln!(
                md,
                "Team total: **{}**, tokens {} (in / out / cache read / cache write).\n",
                cost(c.cost_usd, c.cost_source, true),
                tokens(&c.tokens)
            );
        }
        None => md.push_str("No transcript was found, so the cost is not known.\n\n"),
    }

    md.push_str("### Tasks\n\n");
    if s.tasks.is_empty() {
        md.push_str("No tasks.\n\n");
    } else {
        md.push_str(&header(&["#", "Subject", "Status", "Owner", "Blocked by"]));
        for task in &s.tasks {
            md.push_str(&row(&[
                inline(&task.id, 20),
                inline(&task.subject, 120),
                inline(&task.status, 20),
                opt(task.owner.as_deref(), 64),
                if task.open_blockers.is_empty() {
                    "—".into()
                } else {
                    inline(&task.open_blockers.join(", "), 60)
                },
            ]));
        }
        md.push('\n');
    }

    md.push_str("### Conversation\n\n");
    if s.messages.is_empty() {
        md.push_str("No messages on record.\n\n");
    } else {
        let _ = writeln!(
            md,
            "{} message(s), oldest first (times UTC; protocol frames by their type).\n",
            s.messages.len()
        );
        md.push_str(&header(&["#", "Time", "From", "To", "What", "State"]));
        for (i, m) in s.messages.iter().enumerate() {
            if md.len() > BUDGET {
                let _ = writeln!(
                    md,
                    "\n*The other {} message(s) are left out to keep this report under GitHub's \
                     1 MiB step summary limit; summary.json has every one.*",
                    s.messages.len() - i
                );
                break;
            }
            md.push_str(&row(&[
                (i + 1).to_string(),
                time(m.at.as_deref()),
                inline(&m.from, 64),
                inline(&m.to, 64),
                what(m),
                state(m.state).into(),
            ]));
        }
        md.push('\n');
        let mut left_out = 0;
        for (i, m) in s.messages.iter().enumerate() {
            let Some(text) = &m.text else { continue };
            if md.len() > BUDGET {
                left_out += 1;
                continue;
            }
            let _ = writeln!(
                md,
                "**{}.** {} → {}, {}\n",
                i + 1,
                inline(&m.from, 64),
                inline(&m.to, 64),
                what(m)
            );
            md.push_str(&fenced(text, TEXT_MAX));
            md.push('\n');
        }
        if left_out > 0 {
            let _ = writeln!(
                md,
                "*The texts of {left_out} more message(s) are left out to keep this report under \
                 GitHub's 1 MiB step summary limit; summary.json has every one.*\n"
            );
        }
    }

    md.push_str("### Transcripts\n\n");
    if s.transcripts.is_empty() {
        md.push_str("No transcripts on record.\n\n");
    } else {
        md.push_str(&header(&["Member", "Session", "How", "Lines", "File"]));
        for tr in &s.transcripts {
            md.push_str(&row(&[
                inline(&tr.member, 64),
                opt(tr.session_id.as_deref(), 64),
                inline(tr.kind, 20),
                tr.lines.to_string(),
                match &tr.path {
                    Some(p) => inline(p, 200),
                    None => "*not found*".into(),
                },
            ]));
        }
        md.push('\n');
    }

    if !s.warnings.is_empty() {
        md.push_str("### Warnings\n\n");
        for w in s.warnings.iter().take(50) {
            let _ = writeln!(md, "- {}", inline(w, 300));
        }
        if s.warnings.len() > 50 {
            let _ = writeln!(md, "- … {} more in summary.json", s.warnings.len() - 50);
        }
        md.push('\n');
    }
    md
}

/// Tokens by kind: `in / out / cache read / cache write`.
fn tokens(t: &Tokens) -> String {
    format!(
        "{} / {} / {} / {}",
        count(t.input),
        count(t.output),
        count(t.cache_read),
        count(t.cache_creation)
    )
}

/// `$0.0042 (computed)`, `$1.20 (Claude Code)`; `unknown` for a model without a price (when
/// there are tokens), `—` without a transcript.
fn cost(usd: Option<f64>, source: Option<CostSource>, known: bool) -> String {
    // `\$`: two dollar signs in a line must not read as a formula on GitHub.
    let shown = |v: f64| units::usd(v).replace('$', "\\$");
    match (usd, source) {
        (Some(v), Some(CostSource::ClaudeCode)) => format!("{} (Claude Code)", shown(v)),
        (Some(v), _) => format!("{} (computed)", shown(v)),
        (None, _) if known => "unknown (a model without a price)".into(),
        (None, _) => "—".into(),
    }
}

/// `message: summary`, or the frame type.
fn what(m: &Message) -> String {
    match (&m.frame_type, &m.summary) {
        (Some(f), _) => format!("*{}*", inline(f, 40)),
        (None, Some(sum)) => format!("message: {}", inline(sum, 100)),
        (None, None) => match &m.text {
            Some(t) => format!(
                "message: {}",
                inline(&crate::team::model::first_line(t, 60), 100)
            ),
            None => "message".into(),
        },
    }
}

fn state(s: MessageState) -> &'static str {
    match s {
        MessageState::Unread => "unread",
        MessageState::Read => "read",
        MessageState::Delivered => "delivered",
        MessageState::Consumed => "consumed",
        MessageState::Sent => "sent",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report hides the same characters the terminal output does (one list, `text.rs`):
    /// zero-width ones, tag characters and the paragraph separator too, not only C0/C1 and bidi.
    #[test]
    fn invisible_characters_are_shown() {
        assert_eq!(
            inline("team\u{200b}-lead\u{e0041}\u{2029}x", 100),
            r"team\\u\{200b\}\-lead\\u\{e0041\}\\u\{2029\}x"
        );
    }

    #[test]
    fn inline_text_cannot_become_markdown() {
        assert_eq!(inline("a*b_c", 100), "a\\*b\\_c");
        assert_eq!(
            inline("<img src=x onerror=alert(1)> | @all #1 :x: [l](u)", 100),
            "\\<img src\\=x onerror\\=alert\\(1\\)\\> \\| \\@all \\#1 \\:x\\: \\[l\\]\\(u\\)"
        );
        assert_eq!(
            inline("two\nlines\tand\u{1b}[2J", 100),
            "two lines and\\\\u\\{1b\\}\\[2J"
        );
        assert_eq!(inline("\u{202e}", 100), "\\\\u\\{202e\\}");
        assert_eq!(inline("abcdef", 3), "abc…");
        assert_eq!(inline("  ", 3), "—");
    }

    #[test]
    fn fenced_text_cannot_close_its_fence() {
        let f = fenced("x\n```\n````\ny", 100);
        assert!(f.starts_with("`````text\nx\n```\n````\ny\n`````\n"), "{f}");
        let f = fenced("bell\u{7}\r\nesc\u{1b}", 100);
        assert_eq!(f, "```text\nbell\\u{7}\\u{d}\nesc\\u{1b}\n```\n");
        let f = fenced("abcdef", 2);
        assert!(
            f.contains("ab\n```") && f.contains("4 more characters"),
            "{f}"
        );
    }
}
