//! The help: the keys, in a window over the screen.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use super::theme::Theme;

const HELP: [(&str, &str); 14] = [
    (
        "↑ ↓  j k",
        "select a member (or a request, or scroll: see Tab)",
    ),
    ("Tab  S-Tab", "next / previous pane"),
    ("Enter", "the member's story, live (a request: in full)"),
    ("i", "the member's inbox, every message in full"),
    ("Esc", "back"),
    ("m", "write to the selected member (as `teamctl send`)"),
    ("a", "approve the selected request (y confirms)"),
    ("d", "deny it, with a reason (y confirms)"),
    ("PgUp PgDn", "scroll by ten"),
    ("g G", "to the top / bottom"),
    ("?", "this help"),
    ("q  Ctrl-C", "quit"),
    ("", ""),
    ("", "● marks a message still unread in its inbox"),
];

pub(super) fn help(f: &mut Frame, t: &Theme, area: Rect) {
    let w = area.width.min(66);
    let h = area.height.min(u16::try_from(HELP.len()).unwrap_or(13) + 2);
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    let lines: Vec<Line> = HELP
        .iter()
        .map(|(k, what)| {
            Line::from(vec![
                Span::styled(format!(" {k:<12}"), t.bold()),
                Span::raw(*what),
            ])
        })
        .collect();
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines)
            .block(Block::bordered().title(Span::styled(" Keys · any key closes ", t.title(true)))),
        r,
    );
}
