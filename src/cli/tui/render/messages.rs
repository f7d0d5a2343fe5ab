//! The message timeline: one line a message, newest last, unread ones marked.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use teamctl::observe::timeline::{Delivery, Mail};

use super::theme::{Theme, esc, pane};
use super::words::clock;
use crate::cli::tui::app::{App, Pane};

pub(super) fn message_line(
    m: &Mail,
    t: &Theme,
    colors: &dyn Fn(&str) -> Option<String>,
) -> Line<'static> {
    let unread = match m.delivery {
        Delivery::Unread => Span::styled("● ", t.fg(Color::Cyan).add_modifier(Modifier::BOLD)),
        Delivery::Read | Delivery::Delivered => Span::raw("  "),
    };
    let preview_style = match m.frame.as_deref() {
        Some(f) if f.ends_with("_request") && f != "shutdown_request" => {
            t.fg(Color::Yellow).add_modifier(Modifier::BOLD)
        }
        Some(_) => t.fg(Color::Cyan),
        None => Style::new(),
    };
    Line::from(vec![
        Span::styled(format!("{} ", clock(&m.at)), t.dim()),
        unread,
        Span::styled(esc(&m.from), t.member(colors(&m.from).as_deref())),
        Span::styled(" → ", t.dim()),
        Span::styled(esc(&m.to), t.member(colors(&m.to).as_deref())),
        Span::raw("  "),
        Span::styled(esc(&m.preview), preview_style),
    ])
}

pub(super) fn messages(f: &mut Frame, app: &App, t: &Theme, area: Rect) {
    let all = &app.view.messages;
    let focused = app.focus == Pane::Messages;
    let h = usize::from(area.height.saturating_sub(1));
    let max_scroll = all.len().saturating_sub(h);
    let scroll = app.messages_scroll.min(max_scroll);
    let end = all.len() - scroll;
    let start = end.saturating_sub(h);
    let unread = all
        .iter()
        .filter(|m| m.delivery == Delivery::Unread)
        .count();
    let mut title = format!(" Messages ({}, {unread} unread) ", all.len());
    if scroll > 0 {
        title.push_str(&format!("↑{scroll} "));
    }
    let colors = |name: &str| app.view.member(name).and_then(|m| m.color.clone());
    let lines: Vec<Line> = all[start..end]
        .iter()
        .map(|m| message_line(m, t, &colors))
        .collect();
    let block = pane(t, title, focused);
    f.render_widget(Paragraph::new(lines).block(block), area);
}
