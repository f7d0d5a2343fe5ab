//! The footer: the keys of the screen, a notice, the input being typed or a question.

use ratatui::style::Color;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::theme::{Theme, esc};
use super::words::wrap;
use crate::cli::tui::app::{App, Mode, Pane};

/// The prompt of the input being typed, and the input.
pub(super) fn prompt(app: &App) -> Option<(String, &crate::cli::tui::app::Input)> {
    match &app.mode {
        Mode::Compose { to, input } => Some((format!("to {}› ", esc(to)), input)),
        Mode::Reason { answer, input } => Some((
            format!(
                "deny {} from {}: reason› ",
                esc(&answer.id),
                esc(&answer.from)
            ),
            input,
        )),
        _ => None,
    }
}

/// What of `input` fits after `prompt` in `width` columns, the cursor kept in view, and the
/// cursor's column.
pub(super) fn input_window(
    prompt: &str,
    input: &crate::cli::tui::app::Input,
    width: u16,
) -> (String, u16) {
    let avail = usize::from(width).saturating_sub(prompt.width() + 1).max(1);
    let chars: Vec<String> = input
        .text
        .chars()
        .map(|c| esc(c.encode_utf8(&mut [0; 4])))
        .collect();
    let cursor = input.cursor.min(chars.len());
    let mut start = 0;
    while chars[start..cursor]
        .iter()
        .map(|c| c.width())
        .sum::<usize>()
        > avail
    {
        start += 1;
    }
    let mut shown = String::new();
    let mut w = 0;
    for c in &chars[start..] {
        if w + c.width() > avail {
            break;
        }
        w += c.width();
        shown.push_str(c);
    }
    let col = prompt.width()
        + chars[start..cursor]
            .iter()
            .map(|c| c.width())
            .sum::<usize>();
    (shown, u16::try_from(col).unwrap_or(u16::MAX))
}

/// The footer's lines: keys, a notice, an input or a question.
pub(super) fn footer(app: &App, t: &Theme, width: u16) -> Vec<Line<'static>> {
    let key = |k: &str, what: &str| {
        vec![
            Span::styled(k.to_string(), t.bold()),
            Span::styled(format!(" {what}  "), t.dim()),
        ]
    };
    let keys = |list: &[(&str, &str)]| -> Vec<Line<'static>> {
        vec![Line::from(
            list.iter().flat_map(|(k, w)| key(k, w)).collect::<Vec<_>>(),
        )]
    };
    if let Some(b) = &app.busy {
        return vec![Line::from(Span::styled(format!("… {b}"), t.bold()))];
    }
    if let Some(n) = &app.notice {
        let style = if n.error {
            t.error()
        } else {
            t.fg(Color::Green)
        };
        let text = esc(&n.text);
        let mut lines: Vec<Line> = wrap(&text, usize::from(width.max(1)))
            .into_iter()
            .map(|l| Line::from(Span::styled(l, style)))
            .collect();
        lines.truncate(3);
        return lines;
    }
    match &app.mode {
        Mode::Compose { .. } | Mode::Reason { .. } => {
            let Some((p, input)) = prompt(app) else {
                return Vec::new();
            };
            let (shown, _) = input_window(&p, input, width);
            vec![Line::from(vec![
                Span::styled(p, t.bold()),
                Span::raw(shown),
            ])]
        }
        Mode::Confirm(a) => {
            let text = if a.approve {
                format!(
                    "approve {} from {} ({})? y: yes, any other key: no",
                    a.id, a.from, a.summary
                )
            } else {
                format!(
                    "deny {} from {} ({}) with \"{}\"? y: yes, any other key: no",
                    a.id, a.from, a.summary, a.reason
                )
            };
            wrap(&esc(&text), usize::from(width.max(1)))
                .into_iter()
                .take(3)
                .map(|l| Line::from(Span::styled(l, t.alert())))
                .collect()
        }
        Mode::Story { .. } => keys(&[
            ("↑↓", "scroll"),
            ("i", "inbox"),
            ("m", "message"),
            ("Esc", "back"),
            ("q", "quit"),
        ]),
        Mode::Inbox { .. } => keys(&[
            ("↑↓", "scroll"),
            ("l", "story"),
            ("m", "message"),
            ("Esc", "back"),
            ("q", "quit"),
        ]),
        Mode::Request { .. } => keys(&[
            ("a", "approve"),
            ("d", "deny"),
            ("↑↓", "scroll"),
            ("Esc", "back"),
        ]),
        Mode::Help => keys(&[("any key", "back")]),
        Mode::Normal if app.focus == Pane::Requests => keys(&[
            ("↑↓", "select"),
            ("⏎", "details"),
            ("a/d", "approve/deny"),
            ("m", "message"),
            ("⇥", "pane"),
            ("?", "help"),
            ("q", "quit"),
        ]),
        Mode::Normal => keys(&[
            ("↑↓", "select"),
            ("⏎", "story"),
            ("i", "inbox"),
            ("m", "message"),
            ("a/d", "approve/deny"),
            ("⇥", "pane"),
            ("?", "help"),
            ("q", "quit"),
        ]),
    }
}
