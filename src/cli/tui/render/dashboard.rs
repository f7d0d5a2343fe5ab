//! The dashboard: the members, the tasks, the requests and the messages stacked, each given
//! its height.

use chrono::{DateTime, Utc};
use ratatui::Frame;
use ratatui::layout::Rect;

use super::members::members;
use super::messages::messages;
use super::requests::requests;
use super::tasks::{board_height, tasks};
use super::theme::Theme;
use crate::cli::tui::app::App;

/// How tall each part of the dashboard is in `h` rows: members, tasks, requests, messages.
/// Everything gets what it needs when that leaves the messages four rows; otherwise the
/// members take at most two fifths, the tasks a quarter and the requests five rows.
pub(super) fn heights(app: &App, h: u16) -> [u16; 4] {
    let v = &app.view;
    let n = |x: usize| u16::try_from(x).unwrap_or(u16::MAX);
    let tallest = board_height(app);
    let (want_members, want_tasks) = (
        2u16.saturating_add(n(v.members.len())),
        2u16.saturating_add(n(tallest)).max(3),
    );
    let want_req = if v.requests.is_empty() {
        0
    } else {
        1u16.saturating_add(n(v.requests.len()))
    };
    let fits = want_members
        .saturating_add(want_tasks)
        .saturating_add(want_req)
        .saturating_add(4)
        <= h;
    let (mut members, mut tasks, req) = if fits {
        (want_members, want_tasks, want_req)
    } else {
        (
            want_members.min((h * 2 / 5).max(3)),
            want_tasks.min((h / 4).max(3)),
            want_req.min(5),
        )
    };
    // Messages keep at least a title and three lines: the others give way.
    while h.saturating_sub(members + tasks + req) < 4 && (members > 3 || tasks > 2) {
        if members > 3 {
            members -= 1;
        } else {
            tasks -= 1;
        }
    }
    let messages = h.saturating_sub(members + tasks + req);
    [members, tasks, req, messages]
}

/// The height that shows everything once (for `--once`): every member, task and request, and
/// the newest messages up to `messages`.
pub(crate) fn natural_height(app: &App, messages: usize) -> u16 {
    let v = &app.view;
    let tallest = board_height(app);
    let req = if v.requests.is_empty() {
        0
    } else {
        1 + v.requests.len()
    };
    // The messages get at least four rows on any screen (see `heights`).
    let msgs = (1 + v.messages.len().min(messages)).max(4);
    let rows = 2 + (2 + v.members.len()) + (2 + tallest).max(3) + req + msgs;
    u16::try_from(rows).unwrap_or(u16::MAX)
}

pub(super) fn dashboard(f: &mut Frame, app: &App, t: &Theme, area: Rect, now: DateTime<Utc>) {
    let [mh, th, rh, gh] = heights(app, area.height);
    let mut y = area.y;
    let mut next = |h: u16| {
        let r = Rect::new(
            area.x,
            y,
            area.width,
            h.min(area.bottom().saturating_sub(y)),
        );
        y += r.height;
        r
    };
    let (m, tk, rq, ms) = (next(mh), next(th), next(rh), next(gh));
    members(f, app, t, m, now);
    tasks(f, app, t, tk);
    if rh > 0 {
        requests(f, app, t, rq, now);
    }
    messages(f, app, t, ms);
}
