//! Drawing the live view with ratatui: the header, the members table, the task board, the
//! requests waiting for the lead, the message timeline and the footer; a member's story, its
//! inbox, a request in full and the help as screens of their own. Every string from the team's files
//! goes through [`crate::cli::term::escape_line`] first: ratatui drops C0 and C1 controls but
//! passes bidi overrides and would leave the rest of an escape sequence on screen.
//!
//! A file a pane: `header`, `members`, `tasks`, `requests`, `messages` (stacked by
//! `dashboard`), `story`, `inbox`, `request`, `help`, `footer`; `draw` puts the screen
//! together. They draw with `screen` (what each is drawn from), `theme` (styles, safe text, a pane's block) and `words` (times,
//! counts, wrapping). The folder imports the view model ([`teamctl::observe::top`]), the
//! state in [`crate::cli::tui::app`] and the cli's terminal safety and log lines.

mod dashboard;
mod draw;
#[cfg(test)]
mod fixture;
mod footer;
mod header;
mod help;
mod inbox;
mod members;
mod messages;
mod request;
mod requests;
mod screen;
mod story;
mod tasks;
mod theme;
mod words;

pub(crate) use dashboard::natural_height;
pub(crate) use draw::{draw, text};
