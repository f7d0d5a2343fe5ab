//! `report.html`: the record as one self-contained page for people: the team, its run's state
//! and answer, each member's cost (a table, and inline SVG charts of its cost over time, with
//! the run's caps and `--warn-at` lines, and of its tokens per minute: `chart`), a lane per
//! member of its state over time (`lanes`), the branches' diffstats, the tasks over time
//! (`tasks`) and in a table, and the messages in order; the data it draws embedded once as
//! JSON (`<script type="application/json" id="teamctl-record">`, see [`Embedded`], worked out
//! in `data` from the summary and the transcripts' [`History`]).
//!
//! It loads nothing: no script runs (the JSON block is data), styles and the chart are inline,
//! and a Content-Security-Policy meta (`default-src 'none'`) forbids every request anyway. It
//! reads at 390 px (a viewport meta, one column, tables that scroll) and prints.
//!
//! Teammate text goes through [`crate::text::html`], the one escaper for untrusted text in
//! HTML: no tag, attribute, handler, link or `</script>` from a teammate ever becomes markup,
//! controls and bidi overrides are visible escapes, and inside the JSON block `<`, `>`, `&`,
//! U+2028 and U+2029 are JSON escapes. Long texts are cut, and past [`BUDGET`] the remaining
//! texts are left to `summary.json`.

use std::fmt::Write as _;

use anyhow::Result;

mod chart;
mod data;
mod lanes;
mod task_lines;
mod tasks;

pub use data::{Embedded, EmbeddedMember};
pub use task_lines::{TaskEvent, TaskLine};

use crate::host::git::{stat_text, totals};
use crate::observe::history::History;
use crate::observe::spend::CostSource;
use crate::ops::export::summary::{FOLDER_GONE, Headline, Message, Summary, cost_words};
use crate::text::html::{block, inline, json_script};
use crate::time::parse_time;
use crate::units;

/// The bytes of messages' texts the page shows; past it, texts are left to summary.json.
pub const BUDGET: usize = 768 * 1024;

/// The bytes the list of messages is kept under (texts included); past it, the remaining
/// messages are left to summary.json, so the page stays under 2 MB however long the team ran.
pub const LIST_MAX: usize = 1536 * 1024;

/// The bytes the whole page is kept under: the list of messages gets what the drawings and the
/// embedded data leave of it (at most [`LIST_MAX`]).
pub const PAGE_MAX: usize = 1900 * 1024;

/// What one listed message may take past the list's limit (its text at most [`TEXT_MAX`]
/// characters, escaped), kept free under [`PAGE_MAX`].
const ONE_MESSAGE: usize = 32 * 1024;

/// The most of one message's text the page shows (characters).
pub const TEXT_MAX: usize = 2000;

/// The most files of one branch's diffstat the page lists.
const DIFFSTAT_MAX: usize = 50;

/// The policy: nothing but the inline styles (and `data:` images) may load.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/// The page for `s`, with what its transcripts tell over time from `history`.
///
/// # Errors
/// The embedded data failing to serialize (a bug).
pub fn render(s: &Summary, history: &History) -> Result<String> {
    let embedded = Embedded::of(s, history);
    let axis = chart::Axis::of(&embedded);
    let mut h = String::with_capacity(64 * 1024);
    head(&mut h, s);
    intro(&mut h, s);
    cost(&mut h, s, &embedded, axis);
    lanes::lanes(&mut h, &embedded, axis);
    branches(&mut h, s);
    sandboxes(&mut h, s);
    tasks(&mut h, s, &embedded, axis);
    let mut tail = String::new();
    warnings(&mut tail, s);
    let json = json_script(&serde_json::to_string(&embedded)?);
    let _ = writeln!(
        tail,
        "<script type=\"application/json\" id=\"teamctl-record\">{json}</script>\n</main>\n\
         </body>\n</html>"
    );
    let room = PAGE_MAX.saturating_sub(h.len() + tail.len() + ONE_MESSAGE + 1024);
    conversation(&mut h, s, room.min(LIST_MAX));
    h.push_str(&tail);
    Ok(h)
}

const STYLE: &str = "\
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--mute:#59636e;--line:#d1d9e0}\
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--mute:#9198a1;--line:#3d444d}}\
*{box-sizing:border-box}\
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif}\
main{max-width:60rem;margin:0 auto;padding:1rem}\
h1{font-size:1.4rem;margin:.2rem 0 .6rem;overflow-wrap:anywhere}\
h2{font-size:1.15rem;margin:1.6rem 0 .5rem;border-bottom:1px solid var(--line)}\
.mute{color:var(--mute)}\
.scroll{overflow-x:auto}\
table{border-collapse:collapse;font-size:.9rem}\
th,td{border:1px solid var(--line);padding:.25rem .5rem;text-align:left;vertical-align:top}\
td.n{text-align:right;font-variant-numeric:tabular-nums}\
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:rgba(128,128,128,.1);padding:.5rem;\
margin:.3rem 0 .8rem;font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}\
ol.msgs{padding-left:1.6rem}ol.msgs li{margin-bottom:.4rem}\
svg{width:100%;height:auto;max-width:40rem;display:block}\
svg text{font:11px system-ui,sans-serif;fill:currentColor}svg text.lbl{font-size:9px}\
.axis{fill:none;stroke:var(--line)}\
.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3rem 1rem}\
.sw{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:-.05em}\
.c0{stroke:#0969da;background:#0969da}.c1{stroke:#cf222e;background:#cf222e}\
.c2{stroke:#1a7f37;background:#1a7f37}.c3{stroke:#8250df;background:#8250df}\
.c4{stroke:#bc4c00;background:#bc4c00}.c5{stroke:#0598bc;background:#0598bc}\
.c6{stroke:#bf3989;background:#bf3989}.c7{stroke:#4d2d00;background:#9a6700}\
.c8{stroke:#57606a;background:#57606a}.c9{stroke:#116329;background:#116329}\
polyline{fill:none;stroke-width:2}\
.fbar{fill:#0969da}a{color:#0969da}\
h3{font-size:1rem;margin:1rem 0 .3rem}\
.bar{fill:none;stroke-width:1}.total{stroke:var(--fg);stroke-dasharray:4 3;background:var(--fg)}\
.cap{fill:none;stroke:#cf222e;stroke-dasharray:6 4}.warn{fill:none;stroke:#bc4c00;stroke-dasharray:2 3}\
.s-working{fill:#2da44e;background:#2da44e}.s-idle{fill:#d0d7de;background:#d0d7de}\
.s-stalled{fill:#bf8700;background:#bf8700}.s-rate_limited{fill:#cf222e;background:#cf222e}\
.s-overloaded{fill:#fa4549;background:#fa4549}.s-api_error{fill:#a40e26;background:#a40e26}\
.s-permission{fill:#8250df;background:#8250df}.s-plan{fill:#bf3989;background:#bf3989}\
.s-dead{fill:#24292f;background:#24292f}\
.mk-start{fill:#0969da;background:#0969da}.mk-new{fill:#fb8500;background:#fb8500}\
.mk-restart{fill:#cf222e;background:#cf222e}.mk-resume{fill:#1a7f37;background:#1a7f37}\
.mk-claim{fill:none;stroke:var(--fg);stroke-width:2;background:var(--fg)}\
.t-pending{fill:#d0d7de;background:#d0d7de}.t-in_progress{fill:#0969da;background:#0969da}\
.t-completed{fill:#2da44e;background:#2da44e}.t-other{fill:#8c959f;background:#8c959f}\
@media print{body{font-size:11pt}.scroll{overflow:visible}main{max-width:none}pre{background:none;border:1px solid #ccc}}";

/// The document's head and the heading.
fn head(h: &mut String, s: &Summary) {
    open_page(h, &format!("Team record: {}", inline(&s.team, 128)));
}

/// A page's start, up to its `<h1>` (`title`: HTML already, escaped): the policy
/// ([`CSP`]), no referrer, the viewport, the one style sheet. Every page teamctl writes opens
/// so (the fleet page of `report --html` too).
pub fn open_page(h: &mut String, title: &str) {
    let _ = writeln!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n\
         <h1>{title}</h1>"
    );
}

/// When and by what, the run's state, the counts and the lead's answer.
fn intro(h: &mut String, s: &Summary) {
    let _ = write!(
        h,
        "<p class=\"mute\">Exported {} by {}.",
        time(Some(&s.generated_at)),
        inline(&s.generator, 40)
    );
    if !s.team_folder {
        h.push(' ');
        h.push_str(FOLDER_GONE);
    }
    h.push_str("</p>\n");
    if let Some(r) = &s.run {
        let _ = write!(
            h,
            "<p>Run {}: <strong>{}</strong>",
            inline(&r.name, 64),
            inline(&r.state, 20)
        );
        if let Some(why) = &r.reason {
            let _ = write!(h, ": {}", inline(why.lines().next().unwrap_or(""), 300));
        }
        let _ = writeln!(h, " (after {}).</p>", units::duration(r.elapsed_ms / 1000));
    }
    let n = &s.status.tasks;
    let _ = writeln!(
        h,
        "<p>Lead {}, {} member(s), {} message(s); tasks: {} completed, {} in progress, {} pending.</p>",
        opt(s.status.team.lead_agent_id.as_deref(), 100),
        s.status.members.iter().filter(|m| m.in_config).count(),
        s.messages.len(),
        n.completed,
        n.in_progress,
        n.pending
    );
    if let Some(text) = &s.result {
        let _ = writeln!(
            h,
            "<h2>{}</h2>",
            if s.result_final {
                "Final answer"
            } else {
                "The lead's last answer (its turn had not ended)"
            }
        );
        pre(h, text, TEXT_MAX * 4);
    }
}

/// The cost chart and the members' table.
fn cost(h: &mut String, s: &Summary, e: &Embedded, axis: Option<chart::Axis>) {
    h.push_str("<h2>Cost</h2>\n");
    match &s.cost {
        Some(c) => {
            let _ = writeln!(
                h,
                "<p>Team total: <strong>{}</strong>.</p>",
                usd(c.cost_usd, c.cost_source, true)
            );
        }
        None => h.push_str("<p>No transcript was found, so the cost is not known.</p>\n"),
    }
    chart::cost(h, e, axis);
    chart::tokens(h, e, axis);
    if s.status.members.is_empty() {
        h.push_str("<p>No members on record.</p>\n");
        return;
    }
    h.push_str(
        "<div class=\"scroll\"><table>\n<tr><th>Member</th><th>State</th><th>Tokens in / out / \
         cache read / cache write</th><th>Cost</th></tr>\n",
    );
    for m in &s.status.members {
        let tokens = m.tokens.as_ref().map_or("—".into(), |t| {
            format!(
                "{} / {} / {} / {}",
                units::count(t.input),
                units::count(t.output),
                units::count(t.cache_read),
                units::count(t.cache_creation)
            )
        });
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{tokens}</td><td class=\"n\">{}</td></tr>",
            inline(&m.name, 64),
            inline(&m.state.to_string(), 40),
            usd(m.cost_usd, m.cost_source, m.tokens.is_some())
        );
    }
    h.push_str("</table></div>\n");
}

/// Each member's sandbox (docs/sandbox.md): its engine, network, what it writes and what it
/// cannot see.
fn sandboxes(h: &mut String, s: &Summary) {
    let confined: Vec<_> = s
        .status
        .members
        .iter()
        .filter_map(|m| Some((m, m.sandbox.as_ref()?)))
        .collect();
    if confined.is_empty() {
        return;
    }
    h.push_str("<h2>Sandboxes</h2>\n");
    let list = |v: &[String]| -> String {
        v.iter()
            .map(|p| format!("<code>{}</code>", inline(p, 300)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (m, b) in confined {
        let _ = writeln!(
            h,
            "<p><strong>{}</strong>: {}, network {}; writes {}; hidden: {}.</p>",
            inline(&m.name, 64),
            inline(&b.engine, 20),
            b.network.as_str(),
            list(&b.writable),
            list(&b.hidden)
        );
    }
}

/// Each teammate's branch with its diffstat against the commit it started from.
fn branches(h: &mut String, s: &Summary) {
    if s.worktrees.is_empty() {
        return;
    }
    h.push_str("<h2>Branches</h2>\n");
    for w in &s.worktrees {
        let commit: String = w
            .commit
            .as_deref()
            .unwrap_or("gone")
            .chars()
            .take(12)
            .collect();
        let _ = write!(
            h,
            "<p><strong>{}</strong>: branch <code>{}</code> at <code>{}</code>",
            inline(&w.member, 64),
            inline(&w.branch, 200),
            inline(&commit, 12)
        );
        let Some(files) = &w.files else {
            h.push_str(", its changes could not be read.</p>\n");
            continue;
        };
        let (added, deleted, _) = totals(files);
        let base: String = w.base.chars().take(12).collect();
        let _ = writeln!(
            h,
            ", {} file(s) +{added} -{deleted} against <code>{}</code>.</p>",
            files.len(),
            inline(&base, 12)
        );
        if !files.is_empty() {
            pre(h, &stat_text(files, DIFFSTAT_MAX), usize::MAX);
        }
    }
}

/// The tasks over time and their table.
fn tasks(h: &mut String, s: &Summary, e: &Embedded, axis: Option<chart::Axis>) {
    h.push_str("<h2>Tasks</h2>\n");
    if s.tasks.is_empty() {
        h.push_str("<p>No tasks.</p>\n");
        return;
    }
    tasks::tasks(h, e, axis);
    h.push_str(
        "<div class=\"scroll\"><table>\n<tr><th>#</th><th>Subject</th><th>Status</th>\
         <th>Owner</th><th>Blocked by</th></tr>\n",
    );
    for task in &s.tasks {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            inline(&task.id, 20),
            inline(&task.subject, 200),
            inline(&task.status, 20),
            opt(task.owner.as_deref(), 64),
            inline(&task.open_blockers.join(", "), 60)
        );
    }
    h.push_str("</table></div>\n");
}

/// The messages in order, each with its text (within [`BUDGET`]), the list within `list_max`
/// bytes (and one message).
fn conversation(h: &mut String, s: &Summary, list_max: usize) {
    h.push_str("<h2>Messages</h2>\n");
    if s.messages.is_empty() {
        h.push_str("<p>No messages on record.</p>\n");
        return;
    }
    let _ = writeln!(
        h,
        "<p class=\"mute\">{} message(s), oldest first (times UTC; protocol frames by their type).</p>\n<ol class=\"msgs\">",
        s.messages.len()
    );
    let start = h.len();
    let (mut left_out, mut texts, mut listed) = (0, 0, 0);
    for m in &s.messages {
        if h.len() - start > list_max {
            break;
        }
        listed += 1;
        let _ = write!(
            h,
            "<li><div>{} · <strong>{}</strong> → <strong>{}</strong> · {} · <span class=\"mute\">{}</span></div>",
            time(m.at.as_deref()),
            inline(&m.from, 64),
            inline(&m.to, 64),
            what(m),
            m.state.as_str()
        );
        match &m.text {
            Some(text) if texts < BUDGET => {
                let before = h.len();
                pre(h, text, TEXT_MAX);
                texts += h.len() - before;
            }
            Some(_) => left_out += 1,
            None => {}
        }
        h.push_str("</li>\n");
    }
    h.push_str("</ol>\n");
    if listed < s.messages.len() {
        let _ = writeln!(
            h,
            "<p class=\"mute\">The other {} message(s) are left out to keep this page small; summary.json has every one.</p>",
            s.messages.len() - listed
        );
    }
    if left_out > 0 {
        let _ = writeln!(
            h,
            "<p class=\"mute\">The texts of {left_out} more message(s) are left out to keep this page small; summary.json has every one.</p>"
        );
    }
}

/// What the export could not record.
fn warnings(h: &mut String, s: &Summary) {
    if s.warnings.is_empty() {
        return;
    }
    h.push_str("<h2>Warnings</h2>\n<ul>\n");
    for w in s.warnings.iter().take(50) {
        let _ = writeln!(h, "<li>{}</li>", inline(w, 300));
    }
    if s.warnings.len() > 50 {
        let _ = writeln!(
            h,
            "<li>… {} more in summary.json</li>",
            s.warnings.len() - 50
        );
    }
    h.push_str("</ul>\n");
}

/// Untrusted text (at most `max` characters) as a `<pre>`, and where the rest is.
fn pre(h: &mut String, text: &str, max: usize) {
    let (body, cut) = block(text, max);
    let _ = writeln!(h, "<pre>{body}</pre>");
    if cut > 0 {
        let _ = writeln!(
            h,
            "<p class=\"mute\">({cut} more characters: the whole text is in summary.json)</p>"
        );
    }
}

/// An RFC 3339 time as `2026-12-01 03:29:42`, or the untrusted text escaped.
fn time(t: Option<&str>) -> String {
    match t.map(|t| (t, parse_time(t))) {
        Some((_, Some(d))) => d.format("%Y-%m-%d %H:%M:%S").to_string(),
        Some((t, None)) => inline(t, 40),
        None => "—".into(),
    }
}

fn opt(v: Option<&str>, max: usize) -> String {
    v.map_or_else(|| "—".into(), |s| inline(s, max))
}

/// `$0.0042 (computed)`, `$1.20 (Claude Code)`; `unknown` for a model without a price (when
/// there are tokens), `—` without a transcript.
fn usd(v: Option<f64>, source: Option<CostSource>, known: bool) -> String {
    cost_words(v, source, known, units::usd)
}

/// `message: summary`, or the frame type.
fn what(m: &Message) -> String {
    match m.headline() {
        Headline::Frame(f) => format!("<em>{}</em>", inline(f, 40)),
        Headline::Said(s) => format!("message: {}", inline(&s, 100)),
        Headline::Bare => "message".into(),
    }
}
