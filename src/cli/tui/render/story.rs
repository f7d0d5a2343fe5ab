//! A member's story: its transcript as `teamctl log --follow` prints it, newest last, growing.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::screen::Screen;
use super::theme::{esc, pane, scrolled_lines};
use crate::cli::output::log_line;

/// A member's story: its transcript as `teamctl log --follow` prints it, newest last, growing.
pub(super) fn story(f: &mut Frame, on: &Screen, area: Rect, member: &str, scroll: usize) {
    let (app, t) = (on.app, on.t);
    let mut lines: Vec<Line> = Vec::new();
    let (events, files) = match &app.story {
        Some(s) if s.member == member => {
            if let Some(e) = &s.error {
                lines.push(Line::from(Span::styled(esc(e), t.error())));
            }
            for w in &s.warnings {
                lines.push(Line::from(Span::styled(
                    format!("skipped: {}", esc(w)),
                    t.error(),
                )));
            }
            if s.error.is_none() && s.lines.is_empty() {
                lines.push(Line::from(Span::styled(
                    if s.files == 0 {
                        format!("(no transcript of {} found yet)", esc(member))
                    } else {
                        "(nothing in its transcript yet)".to_string()
                    },
                    t.dim(),
                )));
            }
            for l in &s.lines {
                let style = match l.kind {
                    teamctl::team::transcript::story::Kind::ToolUse => t.fg(Color::Cyan),
                    teamctl::team::transcript::story::Kind::Error => t.error(),
                    teamctl::team::transcript::story::Kind::ToolResult
                        if l.is_error == Some(true) =>
                    {
                        t.fg(Color::Red)
                    }
                    teamctl::team::transcript::story::Kind::Message
                    | teamctl::team::transcript::story::Kind::Prompt => t.bold(),
                    _ => Style::new(),
                };
                lines.push(Line::from(Span::styled(log_line(l), style)));
            }
            (s.lines.len(), s.files)
        }
        _ => {
            lines.push(Line::from(Span::styled("(reading…)", t.dim())));
            (0, 0)
        }
    };
    let mut title = format!(
        " Story of {} ({events} events, {files} transcript{}) · ↑↓ scroll · i inbox · m message · Esc back ",
        esc(member),
        if files == 1 { "" } else { "s" }
    );
    if scroll > 0 {
        title.push_str(&format!("↑{scroll} "));
    }
    let block = pane(t, title, true);
    let h = usize::from(area.height.saturating_sub(1));
    f.render_widget(
        Paragraph::new(scrolled_lines(lines, h, scroll, true)).block(block),
        area,
    );
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use teamctl::observe::log::LogLine;
    use teamctl::team::transcript::story::Kind;

    use super::super::fixture::{buffer, hostile, key};
    use crate::cli::tui::app::Story;
    use crate::cli::tui::fixture::{app, now};
    use crate::cli::tui::frame_text;

    fn log(at: &str, kind: Kind, tool: Option<&str>, summary: &str) -> LogLine {
        LogLine {
            schema_version: 1,
            at: Some(at.into()),
            member: "alice".into(),
            session_id: Some("s".into()),
            kind,
            tool: tool.map(String::from),
            summary: summary.into(),
            text: Some(summary.into()),
            is_error: (kind == Kind::ToolResult).then_some(false),
        }
    }

    #[test]
    fn the_story_of_a_member_as_log_prints_it() {
        use crossterm::event::KeyCode::*;
        let mut a = app();
        key(&mut a, Down);
        key(&mut a, Enter);
        // Before the loop has read it.
        assert!(frame_text(&a, now(), 80, 24).contains("(reading…)"));
        let lines: VecDeque<LogLine> = [
            log(
                "2026-11-29T09:59:00.000Z",
                Kind::Message,
                None,
                "from team-lead: fix the race",
            ),
            log(
                "2026-11-29T10:00:01.000Z",
                Kind::Text,
                None,
                "Looking.\u{1b}]52;c;aGk=\u{7}\u{202e}",
            ),
            log(
                "2026-11-29T10:00:25.000Z",
                Kind::ToolUse,
                Some("Bash"),
                "npm test",
            ),
        ]
        .into_iter()
        .collect();
        a.story = Some(Story {
            member: "alice".into(),
            lines,
            error: None,
            warnings: vec!["projects/x/s.jsonl is a symlink".into()],
            files: 1,
        });
        let text = frame_text(&a, now(), 100, 12);
        let want = " demo  lead team-lead (running) · up 2h 0m · $1.62 · last change 10:00:20 (10s ago) · you: team-lead
 Story of alice (3 events, 1 transcript) · ↑↓ scroll · i inbox · m message · Esc back ──────────────
skipped: projects/x/s.jsonl is a symlink
09:59:00  message      from team-lead: fix the race
10:00:01  text         Looking.\\e]52;c;aGk=\\x07\\u{202e}
10:00:25  tool_use     Bash: npm test





↑↓ scroll  i inbox  m message  Esc back  ? help  q quit
";
        assert_eq!(text, want, "got:\n{text}");
        // The same lines as `teamctl log` prints.
        for l in &a.story.as_ref().unwrap().lines {
            assert!(text.contains(&crate::cli::output::log_line(l)), "{text}");
        }
        // No control character reaches the screen.
        for c in &buffer(&a, now(), 100, 12).content {
            assert!(!c.symbol().chars().any(hostile), "{:?}", c.symbol());
        }
        // Scrolled: the oldest at the top, then back to the newest.
        let small = frame_text(&a, now(), 100, 5);
        assert!(small.contains("10:00:25  tool_use"), "{small}");
        key(&mut a, Up);
        key(&mut a, Up);
        let small = frame_text(&a, now(), 100, 5);
        assert!(
            small.contains("09:59:00  message") && small.contains("↑2"),
            "{small}"
        );
        key(&mut a, End);
        // A member without a transcript, and one that is not a member.
        a.story.as_mut().unwrap().lines.clear();
        a.story.as_mut().unwrap().warnings.clear();
        a.story.as_mut().unwrap().files = 0;
        assert!(frame_text(&a, now(), 80, 24).contains("(no transcript of alice found yet)"));
        a.story.as_mut().unwrap().error = Some("'alice' is not a member of team 'demo'".into());
        assert!(frame_text(&a, now(), 80, 24).contains("'alice' is not a member of team 'demo'"));
    }

    /// `?` in a story (or an inbox) shows the help over it; any key goes back to it.
    #[test]
    fn help_opens_over_a_story_and_closes_back_to_it() {
        use crate::cli::tui::app::Mode;
        use crossterm::event::KeyCode::*;
        let mut a = app();
        key(&mut a, Down);
        key(&mut a, Enter);
        key(&mut a, Up);
        let story = a.mode.clone();
        assert!(matches!(story, Mode::Story { scroll: 1, .. }), "{story:?}");
        key(&mut a, Char('?'));
        assert_eq!(a.mode, Mode::Help);
        let text = frame_text(&a, now(), 100, 30);
        assert!(text.contains("Keys · any key closes"), "{text}");
        assert!(
            text.contains(" Story of alice"),
            "the story beneath:\n{text}"
        );
        key(&mut a, Esc);
        assert_eq!(a.mode, story);
        key(&mut a, Char('i'));
        key(&mut a, F(1));
        assert_eq!(a.mode, Mode::Help);
        key(&mut a, Char(' '));
        assert!(matches!(a.mode, Mode::Inbox { .. }), "{:?}", a.mode);
        // From the dashboard, closing the help goes back to it.
        key(&mut a, Esc);
        key(&mut a, Char('?'));
        key(&mut a, Enter);
        assert_eq!(a.mode, Mode::Normal);
    }
}
