//! What the frame tests of the render files share: a screen drawn into a buffer, a key pressed,
//! the characters a terminal could act on.

use chrono::{DateTime, Utc};
use ratatui::buffer::Buffer;

use super::draw::draw;
use crate::cli::tui::app::{App, Effect};

/// The screen `app` draws at `now` on `w`×`h` cells.
pub(super) fn buffer(app: &App, now: DateTime<Utc>, w: u16, h: u16) -> Buffer {
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
    term.draw(|f| draw(f, app, now)).unwrap();
    term.backend().buffer().clone()
}

/// Presses the key `code` in `app`: what it does.
pub(super) fn key(app: &mut App, code: crossterm::event::KeyCode) -> Effect {
    app.key(crossterm::event::KeyEvent::from(code))
}

/// Every character a terminal could act on, as `term.rs` counts them.
pub(super) fn hostile(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{61c}' | '\u{200e}'
        | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}
