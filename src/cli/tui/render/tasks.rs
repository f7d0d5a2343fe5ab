//! The task board: pending, in progress and completed side by side, a card per task.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use teamctl::observe::top::Card;

use super::theme::{Theme, esc, pane};
use crate::cli::tui::app::{App, Pane};

/// A task on the board: `#2 Fix the race`, and under it, when there is any, who owns it and
/// what blocks it (`@alice`, `blocked by #1`).
pub(super) fn card(c: &Card, t: &Theme, column: &str) -> Vec<Line<'static>> {
    let style = if column == "completed" {
        t.dim()
    } else {
        Style::new()
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("#{} ", esc(&c.id)), t.bold()),
        Span::styled(esc(&c.subject), style),
    ])];
    let mut meta = vec![Span::raw("   ")];
    if let Some(o) = &c.owner {
        meta.push(Span::styled(format!("@{} ", esc(o)), t.fg(Color::Cyan)));
    }
    if !c.blocked_by.is_empty() {
        let ids: Vec<String> = c
            .blocked_by
            .iter()
            .map(|b| format!("#{}", esc(b)))
            .collect();
        meta.push(Span::styled(
            format!("blocked by {}", ids.join(",")),
            t.fg(Color::Red).add_modifier(Modifier::BOLD),
        ));
    }
    if meta.len() > 1 {
        lines.push(Line::from(meta));
    }
    lines
}

/// How many lines a card takes.
pub(super) fn card_height(c: &Card) -> usize {
    if c.owner.is_some() || !c.blocked_by.is_empty() {
        2
    } else {
        1
    }
}

/// The tallest column of the board, in lines.
pub(super) fn board_height(app: &App) -> usize {
    let b = &app.view.tasks;
    [&b.pending, &b.in_progress, &b.completed]
        .iter()
        .map(|col| col.iter().map(card_height).sum::<usize>())
        .max()
        .unwrap_or(0)
}

pub(super) fn tasks(f: &mut Frame, app: &App, t: &Theme, area: Rect) {
    let b = &app.view.tasks;
    let focused = app.focus == Pane::Tasks;
    let block = pane(t, " Tasks ".into(), focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let cols: [Rect; 3] = Layout::horizontal([Constraint::Ratio(1, 3); 3])
        .spacing(1)
        .areas(inner);
    let columns = [
        ("Pending", &b.pending, "pending"),
        ("In progress", &b.in_progress, "in_progress"),
        ("Completed", &b.completed, "completed"),
    ];
    let scroll = app
        .tasks_scroll
        .min(board_height(app).saturating_sub(usize::from(inner.height.saturating_sub(1))));
    for (rect, (title, cards, key)) in cols.iter().zip(columns) {
        let mut lines = vec![Line::from(Span::styled(
            format!("{title} {}", cards.len()),
            t.bold().add_modifier(Modifier::UNDERLINED),
        ))];
        lines.extend(cards.iter().flat_map(|c| card(c, t, key)).skip(scroll));
        f.render_widget(Paragraph::new(lines), *rect);
    }
}
