//! What a screen of its own is drawn from: the app's state, the theme and the time.

use chrono::{DateTime, Utc};

use super::theme::Theme;
use crate::cli::tui::app::App;

/// What a screen is drawn from.
pub(super) struct Screen<'a> {
    pub(super) app: &'a App,
    pub(super) t: &'a Theme,
    pub(super) now: DateTime<Utc>,
}
