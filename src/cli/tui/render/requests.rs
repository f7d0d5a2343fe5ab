//! The requests waiting for the lead: who asks, what kind, how long ago, what.

use chrono::{DateTime, Utc};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders, Cell, HighlightSpacing, Row, Table};
use teamctl::observe::top::RequestRow;
use teamctl::team::protocol::Kind;

use super::theme::{Theme, esc};
use super::words::age_at;
use crate::cli::tui::app::{App, Pane};

pub(super) fn kind_label(k: Kind) -> &'static str {
    match k {
        Kind::Permission => "permission",
        Kind::PlanApproval => "plan",
        Kind::SandboxPermission => "sandbox",
    }
}

pub(super) fn requests(f: &mut Frame, app: &App, t: &Theme, area: Rect, now: DateTime<Utc>) {
    let v = &app.view;
    let focused = app.focus == Pane::Requests;
    let title = format!(
        " Waiting for the lead ({}) · a approve · d deny · ⏎ details ",
        v.requests.len()
    );
    let block = Block::new()
        .borders(Borders::TOP)
        .border_style(t.fg(Color::Yellow))
        .title(Span::styled(
            title,
            if focused {
                t.alert().add_modifier(Modifier::UNDERLINED)
            } else {
                t.alert()
            },
        ));
    let sel = app.request_index();
    let rows = v.requests.iter().map(|r: &RequestRow| {
        Row::new(vec![
            Cell::from(Span::styled(esc(&r.from), t.bold())),
            Cell::from(kind_label(r.kind)),
            Cell::from(age_at(now, Some(r.at.as_str()))),
            Cell::from(Span::styled(esc(&r.summary), t.fg(Color::Yellow))),
        ])
    });
    let table = Table::new(
        rows,
        [
            Constraint::Length(12),
            Constraint::Length(10),
            Constraint::Length(4),
            Constraint::Fill(1),
        ],
    )
    .column_spacing(1)
    .row_highlight_style(if focused {
        Style::new().add_modifier(Modifier::REVERSED)
    } else {
        Style::new().add_modifier(Modifier::BOLD)
    })
    .highlight_symbol("› ")
    .highlight_spacing(HighlightSpacing::Always)
    .block(block);
    let mut state = ratatui::widgets::TableState::default().with_selected(sel);
    f.render_stateful_widget(table, area, &mut state);
}
