//! `report.md`: a record for people, as GitHub-flavoured Markdown that can be appended to
//! `$GITHUB_STEP_SUMMARY` as it is.
//!
//! Teammate text goes through [`crate::text::markdown`], the one escaper for untrusted text in
//! Markdown: a short field (a name, a subject, a summary, a table cell) can form no Markdown or
//! HTML, a message's text is a fenced code block it cannot close, controls are visible escapes
//! such as `\u{1b}`, and no line starts a CI runner's command. The report stays under GitHub's
//! 1 MiB limit for a step summary: long texts are cut, and past [`BUDGET`] the remaining texts
//! are left to `summary.json`.

use std::fmt::Write as _;

use chrono::{DateTime, SecondsFormat, Utc};

use crate::host::git::{stat_text, totals};
use crate::observe::spend::CostSource;
use crate::ops::export::summary::{FOLDER_GONE, Headline, Message, Summary, cost_words};
use crate::team::actions::Kind;
use crate::team::transcript::Tokens;
use crate::text::markdown::{self, inline};
use crate::units::{self, count};

/// The size the report keeps under (GitHub refuses a step summary over 1 MiB).
pub const BUDGET: usize = 900 * 1024;

/// The most of one message's text the report shows (characters).
pub const TEXT_MAX: usize = 4000;

/// A message's text (at most `max` characters) as a fenced block, and where the rest is.
fn block(text: &str, max: usize) -> String {
    let f = markdown::fenced(text, max);
    let mut out = f.block;
    if f.cut > 0 {
        let _ = writeln!(
            out,
            "\n*({} more characters: the whole text is in summary.json)*",
            f.cut
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
    intro(&mut md, s);
    merged(&mut md, s);
    members(&mut md, s);
    branches(&mut md, s);
    sandboxes(&mut md, s);
    tasks(&mut md, s);
    actions(&mut md, s);
    conversation(&mut md, s);
    transcripts(&mut md, s);
    warnings(&mut md, s);
    md
}

/// The heading, the run, the counts and the lead's answer.
fn intro(md: &mut String, s: &Summary) {
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
        md.push(' ');
        md.push_str(FOLDER_GONE);
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
        md.push_str(&block(text, TEXT_MAX * 4));
        md.push('\n');
    }
}

/// What `run --merge-into` merged before the record was taken (nothing without it): where
/// the branch points, the check, each helper's outcome.
fn merged(md: &mut String, s: &Summary) {
    let Some(m) = s.run.as_ref().and_then(|r| r.merge.as_ref()) else {
        return;
    };
    let into = inline(&m.into, 128);
    let _ = writeln!(md, "### Merged onto {into}\n");
    if let Some(why) = &m.error {
        let _ = writeln!(md, "{}\n", inline(why, 300));
        return;
    }
    let short = |c: &str| inline(&c.chars().take(12).collect::<String>(), 12);
    let moved = match (&m.before, &m.after) {
        (Some(b), Some(a)) if b == a => format!("{into} is unchanged at {}", short(b)),
        (Some(b), Some(a)) => format!("{into} moved from {} to {}", short(b), short(a)),
        (None, Some(a)) => format!("{into} was made at {}", short(a)),
        (_, None) => format!("{into} was not moved"),
    };
    let check = match &m.check {
        Some(c) => format!(
            "; the check {} ran {} time(s)",
            inline(c, 200),
            m.checks_run
        ),
        None => String::new(),
    };
    let _ = writeln!(md, "{moved}{check}.\n");
    md.push_str(&header(&["Helper", "Branch", "Outcome"]));
    for h in &m.members {
        let outcome = match h.status.as_str() {
            "merged" => format!(
                "merged as {}",
                h.merged_as.as_deref().map_or("—".into(), short)
            ),
            "up_to_date" => "nothing to merge".into(),
            "conflict" => format!(
                "set aside: conflict in {}",
                inline(&h.conflicts.join(", "), 300)
            ),
            "check_failed" => "set aside: the check failed".into(),
            "missing" => "set aside: its branch is gone".into(),
            other => inline(other, 40),
        };
        md.push_str(&row(&[
            inline(&h.name, 64),
            inline(&h.branch, 128),
            outcome,
        ]));
    }
    md.push('\n');
}

/// The members' table and the team's total.
fn members(md: &mut String, s: &Summary) {
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
                m.unread.to_string(),
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
}

/// Each member's sandbox (docs/sandbox.md): its engine, network, what it writes and what it
/// cannot see.
fn sandboxes(md: &mut String, s: &Summary) {
    let confined: Vec<_> = s
        .status
        .members
        .iter()
        .filter_map(|m| Some((m, m.sandbox.as_ref()?)))
        .collect();
    if confined.is_empty() {
        return;
    }
    md.push_str("### Sandboxes\n\n");
    let list = |v: &[String]| -> String {
        v.iter()
            .map(|p| markdown::code_span(p))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (m, b) in confined {
        let _ = writeln!(
            md,
            "**{}**: {}, network {}; writes {}; hidden: {}.\n",
            inline(&m.name, 64),
            inline(&b.engine, 20),
            b.network.as_str(),
            list(&b.writable),
            list(&b.hidden)
        );
    }
}

/// The most files of one branch's diffstat the report lists.
const DIFFSTAT_MAX: usize = 50;

/// Each teammate's branch with its diffstat against the commit it started from.
fn branches(md: &mut String, s: &Summary) {
    if s.worktrees.is_empty() {
        return;
    }
    md.push_str("### Branches\n\n");
    for w in &s.worktrees {
        let _ = write!(
            md,
            "**{}**: branch {} at {}",
            inline(&w.member, 64),
            markdown::code_span(&w.branch),
            markdown::code_span(
                &w.commit
                    .as_deref()
                    .unwrap_or("gone")
                    .chars()
                    .take(12)
                    .collect::<String>()
            )
        );
        let Some(files) = &w.files else {
            md.push_str(", its changes could not be read.\n\n");
            continue;
        };
        let (added, deleted, _) = totals(files);
        let _ = writeln!(
            md,
            ", {} file(s) +{added} -{deleted} against {} ({}).\n",
            files.len(),
            markdown::code_span(&w.base.chars().take(12).collect::<String>()),
            markdown::code_span(&format!("patches/{}.patch", w.member))
        );
        if !files.is_empty() {
            let stat = stat_text(files, DIFFSTAT_MAX);
            let _ = writeln!(md, "{}", markdown::fenced(&stat, usize::MAX).block);
        }
    }
}

/// The most restarts and resumes the report lists (the last ones).
const ACTIONS_MAX: usize = 50;

/// teamctl's restarts and resumes of the team's members, a row each, the last
/// [`ACTIONS_MAX`] (none: no section).
fn actions(md: &mut String, s: &Summary) {
    if s.actions.is_empty() {
        return;
    }
    md.push_str("### Restarts and resumes\n\n");
    let skip = s.actions.len().saturating_sub(ACTIONS_MAX);
    if skip > 0 {
        let _ = writeln!(
            md,
            "The last {ACTIONS_MAX} of {}; summary.json has every one.\n",
            s.actions.len()
        );
    }
    md.push_str(&header(&["when", "member", "what", "why", "session"]));
    for a in &s.actions[skip..] {
        let what = match a.action {
            Kind::Restart => "restarted",
            Kind::Resume => "resumed",
        };
        md.push_str(&row(&[
            time(Some(&a.at)),
            inline(&a.member, 64),
            what.to_string(),
            inline(&a.why, 120),
            a.session_id.as_deref().map_or_else(
                || "a new one".to_string(),
                |id| markdown::code_span(&id.chars().take(8).collect::<String>()),
            ),
        ]));
    }
    md.push('\n');
}

/// The tasks' table.
fn tasks(md: &mut String, s: &Summary) {
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
}

/// The conversation: a timeline, then each message's text (within [`BUDGET`]).
fn conversation(md: &mut String, s: &Summary) {
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
                m.state.as_str().into(),
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
            md.push_str(&block(text, TEXT_MAX));
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
}

/// The transcripts' table.
fn transcripts(md: &mut String, s: &Summary) {
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
}

/// What the export could not record.
fn warnings(md: &mut String, s: &Summary) {
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
    cost_words(usd, source, known, |v| units::usd(v).replace('$', "\\$"))
}

/// `message: summary`, or the frame type.
fn what(m: &Message) -> String {
    match m.headline() {
        Headline::Frame(f) => format!("*{}*", inline(f, 40)),
        Headline::Said(s) => format!("message: {}", inline(&s, 100)),
        Headline::Bare => "message".into(),
    }
}
