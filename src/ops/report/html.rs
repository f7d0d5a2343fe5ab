//! The fleet's page (`report --html`): one self-contained HTML page for many teams' records:
//! the outcomes, a row per team (its state, time, cost, tasks and the lead's answer), the
//! fleet's cost by team as SVG bars, and each record's own `report.html` linked by a relative
//! path when the record is a folder holding one (an archive is named: its page is inside it).
//!
//! It opens as every page teamctl writes ([`crate::ops::export::html::open_page`]: the
//! Content-Security-Policy `default-src 'none'`, no script but the data block); everything
//! from a record goes through [`crate::text::html`], so a teammate's text (a run's name, a
//! reason, an answer) never becomes markup. The report's JSON (as `report --json` prints it)
//! is embedded as `<script type="application/json" id="teamctl-fleet">`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::ops::export::html::open_page;
use crate::store::atomic_write;
use crate::store::dir::Loc;
use crate::text::html::{block, inline, json_script};
use crate::units::{duration, usd};

use super::{ANSWER_MAX, Report, Team, Totals, Unreadable};

/// A bar's row height and the width of the names' gutter, in the SVG's user units.
const BAR_ROW: f64 = 18.0;
const GUTTER: f64 = 150.0;

/// The embedded JSON: `report --json`'s document.
#[derive(Serialize)]
struct Embedded<'a> {
    schema_version: u32,
    teams: &'a [Team],
    totals: &'a Totals,
    unreadable: &'a [Unreadable],
}

/// The page of `r`, to be written at `out` (the links to records' pages are relative to its
/// folder).
///
/// # Errors
/// The embedded data failing to serialize (a bug).
pub fn render(r: &Report, out: &Path) -> Result<String> {
    let mut h = String::with_capacity(16 * 1024);
    let n = r.totals.teams;
    open_page(
        &mut h,
        &format!("Fleet: {n} team{}", if n == 1 { "" } else { "s" }),
    );
    let outcomes = r.totals.outcome_words(|k| inline(k, 40));
    let _ = writeln!(
        h,
        "<p>{}; {} in all, {} of {} task(s) done, {} of work.</p>",
        if outcomes.is_empty() {
            "No team".to_string()
        } else {
            outcomes.join(", ")
        },
        r.totals.cost_usd.map_or("cost unknown".into(), usd),
        r.totals.tasks.completed,
        r.totals.tasks.total,
        duration(r.totals.duration_ms / 1000)
    );
    let base = folder_of(out);
    table(&mut h, r, base.as_deref());
    bars(&mut h, &r.teams);
    unreadable(&mut h, &r.unreadable);
    answers(&mut h, &r.teams);
    let json = serde_json::to_string(&Embedded {
        schema_version: 1,
        teams: &r.teams,
        totals: &r.totals,
        unreadable: &r.unreadable,
    })?;
    let _ = writeln!(
        h,
        "<script type=\"application/json\" id=\"teamctl-fleet\">{}</script>\n</main>\n</body>\n</html>",
        json_script(&json)
    );
    Ok(h)
}

/// Writes the page of `r` to `out` (atomically: a whole page or none; anything but a regular
/// file at `out`, a symlink included, is refused and left as it is).
///
/// # Errors
/// `out` names no file, its folder is missing, or I/O.
pub fn write(r: &Report, out: &Path) -> Result<()> {
    let Some(name) = out.file_name() else {
        bail!("--out {} names no file", out.display());
    };
    let folder = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let page = render(r, out)?;
    atomic_write(&Loc::root(folder).join(name), page.as_bytes())
        .with_context(|| format!("could not write the fleet page {}", out.display()))
}

/// The folder the page goes in, resolved (`None`: it cannot be).
fn folder_of(out: &Path) -> Option<PathBuf> {
    let abs = std::path::absolute(out).ok()?;
    std::fs::canonicalize(abs.parent()?).ok()
}

/// A row per team.
fn table(h: &mut String, r: &Report, base: Option<&Path>) {
    if r.teams.is_empty() {
        return;
    }
    h.push_str(
        "<div class=\"scroll\"><table>\n<tr><th>#</th><th>Team</th><th>State</th><th>Time</th>\
         <th>Cost</th><th>Tasks done</th><th>Members</th><th>Record</th></tr>\n",
    );
    for (i, t) in r.teams.iter().enumerate() {
        let _ = writeln!(
            h,
            "<tr><td class=\"n\">{}</td><td>{}<br><span class=\"mute\">{}</span></td><td>{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{} of {}</td>\
             <td class=\"n\">{}</td><td>{}</td></tr>",
            i + 1,
            inline(&t.name, 80),
            inline(&t.team, 80),
            state(t),
            t.duration_ms.map_or("—".into(), |ms| duration(ms / 1000)),
            t.cost_usd.map_or("unknown".into(), usd),
            t.tasks.completed,
            t.tasks.total,
            t.members,
            record(&t.record, base)
        );
    }
    h.push_str("</table></div>\n");
}

/// The run's state and why, or that no run took the record.
fn state(t: &Team) -> String {
    let Some(o) = &t.outcome else {
        return "no run".into();
    };
    match &t.reason {
        Some(why) => format!(
            "<strong>{}</strong>: {}",
            inline(o, 40),
            inline(why.lines().next().unwrap_or(""), 200)
        ),
        None => format!("<strong>{}</strong>", inline(o, 40)),
    }
}

/// A link to the record's page when the record is a folder holding `report.html` (relative to
/// the page's folder), else its name.
fn record(path: &Path, base: Option<&Path>) -> String {
    let shown = path.to_string_lossy();
    let name = inline(shown.strip_suffix('/').unwrap_or(&shown), 200);
    let page = path.join("report.html");
    let is_page = std::fs::symlink_metadata(&page).is_ok_and(|m| m.is_file());
    let link = base
        .filter(|_| path.is_dir() && is_page)
        .and_then(|base| relative_url(base, &page));
    match link {
        Some(href) => format!("<a href=\"{}\">{name}/report.html</a>", inline(&href, 2000)),
        None if path.is_dir() => format!("{name} <span class=\"mute\">(no report.html)</span>"),
        None => format!("{name} <span class=\"mute\">(archive: its report.html is inside)</span>"),
    }
}

/// `target` as a relative URL from the folder `base` (both resolved), percent-encoded by the
/// url crate, and never read as a scheme (`./` first unless it starts with `../`).
fn relative_url(base: &Path, target: &Path) -> Option<String> {
    let target = std::fs::canonicalize(target).ok()?;
    let base = url::Url::from_directory_path(base).ok()?;
    let target = url::Url::from_file_path(target).ok()?;
    let rel = base.make_relative(&target)?;
    Some(if rel.starts_with("../") {
        rel
    } else {
        format!("./{rel}")
    })
}

/// The fleet's cost by team as horizontal bars; a team whose cost is unknown gets no bar and
/// says so.
fn bars(h: &mut String, teams: &[Team]) {
    if teams.is_empty() {
        return;
    }
    h.push_str("<h2>Cost by team</h2>\n");
    let max = teams
        .iter()
        .filter_map(|t| t.cost_usd)
        .fold(0.0_f64, f64::max);
    let height = teams.len() as f64 * BAR_ROW + 4.0;
    let _ = writeln!(
        h,
        "<svg viewBox=\"0 0 640 {height}\" role=\"img\" aria-label=\"The fleet's cost by team\">"
    );
    let room = 640.0 - GUTTER - 90.0;
    for (i, t) in teams.iter().enumerate() {
        let y = 2.0 + i as f64 * BAR_ROW;
        let _ = writeln!(
            h,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            GUTTER - 6.0,
            y + 12.0,
            inline(&format!("{}. {}", i + 1, t.name), 24)
        );
        let (w, label) = match t.cost_usd {
            Some(c) if max > 0.0 => (room * c / max, usd(c)),
            Some(c) => (0.0, usd(c)),
            None => (0.0, "unknown".to_string()),
        };
        let _ = writeln!(
            h,
            "<rect class=\"fbar\" x=\"{GUTTER}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{label}</text>",
            BAR_ROW - 4.0,
            GUTTER + w + 4.0,
            y + 12.0
        );
    }
    h.push_str("</svg>\n");
}

/// The records that could not be read.
fn unreadable(h: &mut String, u: &[Unreadable]) {
    if u.is_empty() {
        return;
    }
    h.push_str("<h2>Records that could not be read</h2>\n<ul>\n");
    for x in u {
        let _ = writeln!(
            h,
            "<li><code>{}</code>: {}</li>",
            inline(&x.record.to_string_lossy(), 200),
            inline(&x.error, 300)
        );
    }
    h.push_str("</ul>\n");
}

/// Each team's result: the lead's answer (cut).
fn answers(h: &mut String, teams: &[Team]) {
    if teams.iter().all(|t| t.result.is_none()) {
        return;
    }
    h.push_str("<h2>Results</h2>\n");
    for (i, t) in teams.iter().enumerate() {
        let Some(a) = &t.result else { continue };
        let (body, cut) = block(a, ANSWER_MAX);
        let _ = writeln!(
            h,
            "<h3>{}. {}</h3>\n<pre>{body}</pre>",
            i + 1,
            inline(&t.name, 80)
        );
        if cut > 0 {
            let _ = writeln!(
                h,
                "<p class=\"mute\">({cut} more characters: the whole answer is in the record)</p>"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_links_never_read_as_a_scheme() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let rec = base.join("javascript:alert(1)");
        std::fs::create_dir_all(rec.join("x")).unwrap();
        std::fs::write(rec.join("report.html"), "p").unwrap();
        let href = relative_url(&base, &rec.join("report.html")).unwrap();
        assert_eq!(href, "./javascript:alert(1)/report.html");
        let sub = base.join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(
            relative_url(&sub, &rec.join("report.html")).unwrap(),
            "../javascript:alert(1)/report.html"
        );
        let spaced = base.join("a b#c");
        std::fs::create_dir_all(&spaced).unwrap();
        std::fs::write(spaced.join("report.html"), "p").unwrap();
        assert_eq!(
            relative_url(&base, &spaced.join("report.html")).unwrap(),
            "./a%20b%23c/report.html"
        );
    }
}
