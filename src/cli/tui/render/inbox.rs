//! A member's inbox, every message in full: a frame's JSON indented, text wrapped.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use teamctl::observe::timeline::{Delivery, Mail};

use super::screen::Screen;
use super::theme::{esc, pane, scrolled_lines};
use super::words::wrap;

pub(super) fn inbox(f: &mut Frame, on: &Screen, area: Rect, member: &str, scroll: usize) {
    let (app, t) = (on.app, on.t);
    let width = usize::from(area.width.saturating_sub(4));
    let msgs: Vec<&Mail> = app.timeline.inbox_of(member).collect();
    let unread = msgs
        .iter()
        .filter(|m| m.delivery == Delivery::Unread)
        .count();
    let mut lines: Vec<Line> = Vec::new();
    for m in &msgs {
        let state = match m.delivery {
            Delivery::Unread => {
                Span::styled("● unread", t.fg(Color::Cyan).add_modifier(Modifier::BOLD))
            }
            Delivery::Read => Span::styled("read", t.dim()),
            Delivery::Delivered => Span::styled("taken", t.dim()),
        };
        let mut head = vec![
            Span::styled(
                format!(
                    "{} ",
                    m.at.get(..19).map_or(m.at.clone(), |s| s.replace('T', " "))
                ),
                t.dim(),
            ),
            Span::raw("from "),
            Span::styled(esc(&m.from), t.bold()),
            Span::raw("  "),
            state,
        ];
        if let Some(fr) = &m.frame {
            head.push(Span::styled(format!("  [{}]", esc(fr)), t.fg(Color::Cyan)));
        }
        lines.push(Line::from(head));
        // A frame is compact JSON: shown indented, one field a line.
        let pretty = m.frame.as_ref().and(m.text.as_deref()).and_then(|t| {
            serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(t).ok()?).ok()
        });
        match pretty.as_ref().or(m.text.as_ref()) {
            Some(text) => {
                for raw in text.split('\n') {
                    for part in wrap(&esc(raw), width) {
                        lines.push(Line::from(vec![
                            Span::styled("  │ ", t.dim()),
                            Span::raw(part),
                        ]));
                    }
                }
            }
            None => lines.push(Line::from(vec![
                Span::styled("  │ ", t.dim()),
                Span::styled(format!("(sent by teamctl: {})", esc(&m.preview)), t.dim()),
            ])),
        }
    }
    if msgs.is_empty() {
        lines.push(Line::from(Span::styled(
            "(nothing seen in this inbox yet)",
            t.dim(),
        )));
    }
    let title = format!(
        " Inbox of {} ({} messages, {unread} unread) · ↑↓ scroll · l story · m message · Esc back ",
        esc(member),
        msgs.len()
    );
    let block = pane(t, title, true);
    let h = usize::from(area.height.saturating_sub(1));
    f.render_widget(
        Paragraph::new(scrolled_lines(lines, h, scroll, true)).block(block),
        area,
    );
}
