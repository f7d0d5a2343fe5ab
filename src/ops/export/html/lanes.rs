//! The lanes: a row per member over time, coloured by its state (working, idle, and each
//! reason it waited), its sessions' starts and the restarts and resumes teamctl made marked;
//! with a legend that says what a lane cannot know ([`crate::observe::history::lanes::LIMITS`]).

use std::fmt::Write as _;

use crate::observe::history::lanes::{LIMITS, LaneState, Mark, MarkAt};
use crate::text::html::inline;

use super::chart::{Axis, PLOT};
use super::data::Embedded;

/// A lane's height, and the gap under it, in the SVG's user units.
const ROW: f64 = 16.0;
const GAP: f64 = 6.0;

/// What a state is called in the legend.
fn label(s: LaneState) -> &'static str {
    match s {
        LaneState::Working => "working",
        LaneState::Idle => "idle",
        LaneState::Stalled => "stalled",
        LaneState::RateLimited => "rate limited",
        LaneState::Overloaded => "overloaded",
        LaneState::ApiError => "API error",
        LaneState::Permission => "permission",
        LaneState::Plan => "plan approval",
        LaneState::Dead => "dead",
    }
}

/// The lanes' section: one SVG, a legend, and what a lane cannot know.
pub fn lanes(h: &mut String, e: &Embedded, axis: Option<Axis>) {
    h.push_str("<h2>Members over time</h2>\n");
    let rows: Vec<_> = e
        .members
        .iter()
        .filter(|m| !m.lane.spans.is_empty())
        .collect();
    let Some(axis) = axis.filter(|_| !rows.is_empty()) else {
        h.push_str("<p class=\"mute\">No transcript line with a time: no lanes.</p>\n");
        let _ = writeln!(h, "<p class=\"mute\">{LIMITS}</p>");
        return;
    };
    let (l, _, r, _) = PLOT;
    let height = rows.len() as f64 * (ROW + GAP) + 24.0;
    let _ = writeln!(
        h,
        "<svg viewBox=\"0 0 640 {height}\" role=\"img\" aria-label=\"Each member's state over time\">"
    );
    for (k, m) in rows.iter().enumerate() {
        let top = 4.0 + k as f64 * (ROW + GAP);
        let _ = writeln!(
            h,
            "<text class=\"lbl\" x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            l - 3.0,
            top + ROW - 4.0,
            inline(m.name, 10)
        );
        // Idle under the whole lane, the other states drawn over it.
        if let (Some(first), Some(last)) = (m.lane.spans.first(), m.lane.spans.last()) {
            let (x0, x1) = (axis.x(first.from), axis.x(last.to));
            let _ = writeln!(
                h,
                "<rect class=\"s-idle\" x=\"{x0:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{ROW}\"/>",
                (x1 - x0).max(0.4)
            );
        }
        for s in m.lane.spans.iter().filter(|s| s.state != LaneState::Idle) {
            let (x0, x1) = (axis.x(s.from), axis.x(s.to));
            let _ = writeln!(
                h,
                "<rect class=\"s-{}\" x=\"{x0:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{ROW}\"/>",
                s.state.as_str(),
                (x1 - x0).max(0.4)
            );
        }
        for mk in &m.lane.marks {
            mark(h, mk, axis.x(mk.at), top);
        }
    }
    axis.labels(h, height - 4.0);
    let _ = writeln!(h, "<path class=\"axis\" d=\"M{l} {}H{r}\"/>", height - 20.0);
    h.push_str("</svg>\n<ul class=\"legend\">");
    for s in LaneState::ALL {
        let _ = write!(
            h,
            "<li><span class=\"sw s-{}\"></span>{}</li>",
            s.as_str(),
            label(s)
        );
    }
    h.push_str(
        "<li><span class=\"sw mk-start\"></span>first session</li>\
         <li><span class=\"sw mk-new\"></span>new session (restart or resume)</li>\
         <li><span class=\"sw mk-restart\"></span>restarted by teamctl</li>\
         <li><span class=\"sw mk-resume\"></span>resumed by teamctl</li></ul>\n",
    );
    if rows.iter().any(|m| m.lane.resampled) {
        h.push_str(
            "<p class=\"mute\">A long lane is drawn on a coarser grid: each slice shows the \
             wait it held, if any, else the state it held longest.</p>\n",
        );
    }
    let _ = writeln!(h, "<p class=\"mute\">Times UTC. {LIMITS}</p>");
}

/// One mark on a lane whose top is at `top`: a session's start as a triangle above the lane, a
/// restart or resume teamctl made as a bar across it, titled with when and why (escaped).
fn mark(h: &mut String, mk: &MarkAt, x: f64, top: f64) {
    let (class, what) = match mk.mark {
        Mark::Started => ("mk-start", "first session"),
        Mark::NewSession => ("mk-new", "new session"),
        Mark::Restart => ("mk-restart", "restarted by teamctl"),
        Mark::Resume => ("mk-resume", "resumed by teamctl"),
    };
    let shape = match mk.mark {
        Mark::Started | Mark::NewSession => format!("M{x:.1} {top:.1}l-4 -4h8z"),
        Mark::Restart | Mark::Resume => {
            format!("M{:.1} {:.1}h3v{}h-3z", x - 1.5, top - 2.0, ROW + 4.0)
        }
    };
    let at = crate::time::iso_millis(mk.at);
    let why = mk
        .why
        .as_deref()
        .map(|w| format!(": {}", inline(w, 80)))
        .unwrap_or_default();
    let _ = writeln!(
        h,
        "<path class=\"{class}\" d=\"{shape}\"><title>{what} at {at}{why}</title></path>"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A restart teamctl made is a bar across the lane titled with when and why, escaped.
    #[test]
    fn a_restart_is_a_titled_bar_and_its_why_is_text() {
        let mut h = String::new();
        let mk = MarkAt {
            at: crate::time::parse_time("2026-12-01T00:19:00Z").unwrap(),
            mark: Mark::Restart,
            why: Some("dead</title><script>x</script>".into()),
        };
        mark(&mut h, &mk, 100.0, 4.0);
        assert_eq!(
            h,
            "<path class=\"mk-restart\" d=\"M98.5 2.0h3v20h-3z\"><title>restarted by teamctl at \
             2026-12-01T00:19:00.000Z: dead&lt;/title&gt;&lt;script&gt;x&lt;/script&gt;</title>\
             </path>\n"
        );
    }
}
