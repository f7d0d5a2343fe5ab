//! What every pane is drawn with: the styles (none of the colours under `NO_COLOR`), teammate
//! text made safe, a pane's block and the visible window of a scrolled screen.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};
use teamctl::observe::status::State;

use crate::cli::term::escape_line;

/// Teammate text as one safe line.
pub(super) fn esc(s: &str) -> String {
    escape_line(s).into_owned()
}

/// Styles, or none of them under `NO_COLOR` (bold and reverse stay: they are not colour).
pub(super) struct Theme {
    pub(super) color: bool,
}

impl Theme {
    pub(super) fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }
    pub(super) fn dim(&self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new()
        }
    }
    pub(super) fn bold(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }
    pub(super) fn title(&self, focused: bool) -> Style {
        if focused {
            self.bold().add_modifier(Modifier::REVERSED)
        } else {
            self.bold()
        }
    }
    pub(super) fn alert(&self) -> Style {
        if self.color {
            Style::new()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED)
        }
    }
    pub(super) fn error(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    /// A member's palette colour (Claude Code's eight).
    pub(super) fn member(&self, color: Option<&str>) -> Style {
        let c = match color {
            Some("red") => Color::Red,
            Some("blue") => Color::Blue,
            Some("green") => Color::Green,
            Some("yellow") => Color::Yellow,
            Some("purple") => Color::Magenta,
            Some("orange") => Color::Indexed(208),
            Some("pink") => Color::LightMagenta,
            Some("cyan") => Color::Cyan,
            _ => return Style::new(),
        };
        self.fg(c)
    }
    pub(super) fn state(&self, s: State) -> Style {
        match s {
            State::Active => self.fg(Color::Green),
            State::Idle => self.fg(Color::Yellow),
            State::Terminated => self.fg(Color::Red),
            State::Unknown => self.dim(),
        }
    }
}

pub(super) fn pane<'a>(t: &Theme, title: String, focused: bool) -> Block<'a> {
    Block::new()
        .borders(Borders::TOP)
        .border_style(t.dim())
        .title(Span::styled(title, t.title(focused)))
}

/// Lines of the body of a detail screen, each already safe, wrapped to `width`.
pub(super) fn scrolled_lines(
    lines: Vec<Line<'static>>,
    height: usize,
    scroll: usize,
    from_bottom: bool,
) -> Vec<Line<'static>> {
    let max = lines.len().saturating_sub(height);
    let scroll = scroll.min(max);
    let start = if from_bottom { max - scroll } else { scroll };
    lines.into_iter().skip(start).take(height).collect()
}
