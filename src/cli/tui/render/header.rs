//! The header: the team, its lead, its age, its cost, the last change, problems, you.

use chrono::{DateTime, Utc};
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use teamctl::units::{count, usd};
use unicode_width::UnicodeWidthStr;

use super::theme::{Theme, esc};
use super::words::{age_at, clock, up_since};
use crate::cli::tui::app::App;

/// The header: the team, its lead, its age, its cost, the last change, problems, you; parts
/// that do not fit whole are left out from the end.
pub(super) fn header(app: &App, t: &Theme, now: DateTime<Utc>, width: u16) -> Line<'static> {
    let h = &app.view.team;
    let mut parts: Vec<Vec<Span<'static>>> = Vec::new();
    let mut lead = Vec::new();
    if let Some(name) = &h.lead {
        lead.push(Span::raw("lead "));
        lead.push(Span::styled(esc(name), t.bold()));
        match h.lead_alive {
            Some(true) => lead.push(Span::styled(" (running)", t.fg(Color::Green))),
            Some(false) => lead.push(Span::styled(" (not running)", t.fg(Color::Red))),
            None => {}
        }
        parts.push(lead);
    }
    if let Some(up) = h.created_at.as_deref().and_then(|c| up_since(now, c)) {
        parts.push(vec![Span::raw(format!("up {up}"))]);
    }
    match (h.cost_usd, &h.tokens) {
        (Some(cost), _) => parts.push(vec![Span::styled(usd(cost), t.bold())]),
        (None, Some(tokens)) => parts.push(vec![Span::raw(format!(
            "{} tokens, cost unknown",
            count(tokens.total())
        ))]),
        (None, None) => {}
    }
    // The last change, with its clock time when there is room.
    let mut short = None;
    parts.push(match &app.trouble {
        Some(why) => vec![Span::styled(esc(why), t.error())],
        None => vec![Span::raw(match &h.last_change_at {
            Some(at) => {
                let ago = age_at(now, Some(at.as_str()));
                short = Some((parts.len(), format!("last change {ago} ago")));
                format!("last change {} ({ago} ago)", clock(at))
            }
            None => "no change yet".into(),
        })],
    });
    if !app.view.warnings.is_empty() {
        let n = app.view.warnings.len();
        parts.push(vec![Span::styled(
            format!("{n} unreadable file{}", if n == 1 { "" } else { "s" }),
            t.error(),
        )]);
    }
    parts.push(vec![Span::styled(
        format!("you: {}", esc(&app.identity)),
        t.dim(),
    )]);
    let mut spans = vec![
        Span::styled(format!(" {} ", esc(&h.name)), t.title(true)),
        Span::raw(" "),
    ];
    let mut used: usize = spans.iter().map(Span::width).sum();
    for (i, part) in parts.into_iter().enumerate() {
        let sep = if i == 0 { 0 } else { 3 };
        let w: usize = part.iter().map(Span::width).sum();
        let mut part = part;
        let mut w = w;
        if used + sep + w > usize::from(width)
            && let Some((_, text)) = short.as_ref().filter(|(at, _)| *at == i)
        {
            part = vec![Span::raw(text.clone())];
            w = text.width();
        }
        // The first part (or the trouble) is cut rather than left out.
        if used + sep + w > usize::from(width) && i > 0 {
            break;
        }
        if i > 0 {
            spans.push(Span::styled(" · ", t.dim()));
        }
        used += sep + w;
        spans.extend(part);
    }
    Line::from(spans)
}
