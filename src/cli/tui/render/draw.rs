//! The whole screen: the header, the dashboard or a screen of its own, the footer, the cursor of
//! an input, the help over it; and a drawn buffer as plain text.

use chrono::{DateTime, Utc};
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

use super::dashboard::dashboard;
use super::footer::{footer, input_window, prompt};
use super::header::header;
use super::help::help;
use super::inbox::inbox;
use super::request::request;
use super::screen::Screen;
use super::story::story;
use super::theme::Theme;
use crate::cli::tui::app::{App, Mode};

/// Draws the whole screen.
pub(crate) fn draw(f: &mut Frame, app: &App, now: DateTime<Utc>) {
    let t = Theme { color: app.colors };
    let area = f.area();
    let footer_lines = footer(app, &t, area.width);
    let fh = u16::try_from(footer_lines.len()).unwrap_or(1);
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(fh),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(header(app, &t, now, area.width)), head);
    let on = Screen { app, t: &t, now };
    match app.beneath() {
        Mode::Story { member, scroll } => story(f, &on, body, member, *scroll),
        Mode::Inbox { member, scroll } => inbox(f, &on, body, member, *scroll),
        Mode::Request { id, scroll } => request(f, &on, body, id, *scroll),
        _ => dashboard(f, app, &t, body, now),
    }
    f.render_widget(Paragraph::new(footer_lines.clone()), foot);
    if app.busy.is_none()
        && app.notice.is_none()
        && let Some((prompt, input)) = prompt(app)
    {
        let (_, cursor) = input_window(&prompt, input, foot.width);
        f.set_cursor_position((
            foot.x + cursor.min(foot.width.saturating_sub(1)),
            foot.y + fh - 1,
        ));
    }
    if app.mode == Mode::Help {
        help(f, &t, area);
    }
}

/// A buffer as plain text: one line per row, trailing blanks cut, trailing empty rows dropped.
pub(crate) fn text(buf: &Buffer) -> String {
    let mut rows = Vec::new();
    for y in buf.area.top()..buf.area.bottom() {
        let mut line = String::new();
        let mut skip = 0;
        for x in buf.area.left()..buf.area.right() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let sym = buf[(x, y)].symbol();
            line.push_str(sym);
            skip = sym.width().saturating_sub(1);
        }
        rows.push(line.trim_end().to_string());
    }
    while rows.last().is_some_and(String::is_empty) {
        rows.pop();
    }
    rows.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use ratatui::style::Color;
    use serde_json::json;
    use teamctl::observe::event::{Event, Kind};
    use teamctl::observe::timeline::Timeline;
    use teamctl::observe::watch::Changes;
    use unicode_width::UnicodeWidthStr;

    use super::super::fixture::{buffer, hostile, key};
    use super::*;
    use crate::cli::tui::app::Effect;
    use crate::cli::tui::fixture::{app, now};
    use crate::cli::tui::frame_text;

    #[test]
    fn a_team_at_80_by_24() {
        let text = frame_text(&app(), now(), 80, 24);
        let want = " demo  lead team-lead (running) · up 2h 0m · $1.62 · last change 10s ago
 Members (3) ───────────────────────────────────────────────────────────────────
  NAME      STATE  WAITING    DOING                COST  UNREAD TASKS SEEN ALIVE
› team-lead active            text: Waiting… (20s) $1.20 0      0/0   30s  -
  alice     active permission Bash: npm test (5s)  $0.42 2      1/1   30s  yes
  bob       idle   blocked                         -     0      0/1   20m  -
 Tasks ─────────────────────────────────────────────────────────────────────────
Pending 1                  In progress 1              Completed 1
#3 Ship it                 #2 Fix the race            #1 Find the race
   @bob blocked by #2         @alice                     @alice
 Waiting for the lead (1) · a approve · d deny · ⏎ details ─────────────────────
› alice        permission 10s  Bash: npm test
 Messages (2, 1 unread) ────────────────────────────────────────────────────────
10:00:00   team-lead → alice  Please fix the race
10:00:20 ● alice → team-lead  [permission_request] Bash: npm test








↑↓ select  ⏎ story  i inbox  m message  a/d approve/deny  ⇥ pane  ? help  q quit
";
        assert_eq!(text, want, "got:\n{text}");
        assert_eq!(text.lines().count(), 24);
    }

    #[test]
    fn wider_screens_give_the_room_to_the_text() {
        let text = frame_text(&app(), now(), 120, 30);
        assert!(
            text.contains("#3 Ship it") && text.contains("@bob blocked by #2"),
            "{text}"
        );
        assert!(text.contains("· you: team-lead"), "{text}");
        assert!(text.lines().all(|l| l.width() <= 120));
        // Tiny screens draw what fits and do not panic.
        for (w, h) in [(20, 6), (40, 10), (80, 8), (200, 80)] {
            let t = frame_text(&app(), now(), w, h);
            assert!(
                t.lines().all(|l| l.width() <= usize::from(w)),
                "{w}x{h}:\n{t}"
            );
        }
    }

    #[test]
    fn hostile_text_never_reaches_the_screen_raw() {
        let mut a = app();
        let evil = "\u{1b}]0;PWNED\u{7}\u{1b}[2J\u{1b}]52;c;aGk=\u{7}\u{202e}evil\u{2066}\r\nsecond\tline\u{9b}31m";
        a.view.members[1].name = format!("al{evil}");
        a.view.members[1].waiting = Some(evil.into());
        a.view.team.name = evil.into();
        a.view.tasks.pending[0].subject = evil.into();
        a.view.tasks.pending[0].owner = Some(evil.into());
        a.view.requests[0].summary = evil.into();
        a.view.requests[0].from = evil.into();
        a.view.messages[0].preview = evil.into();
        a.view.messages[0].from = evil.into();
        a.identity = evil.into();
        let mut t = Timeline::new(10);
        let entry = serde_json::from_value(json!({"from": evil, "text": evil,
            "timestamp": "2026-11-29T10:00:00.000Z", "msg_id": "m1", "read": false}))
        .unwrap();
        t.apply(&Changes {
            events: vec![Event {
                to: Some("alice".into()),
                from: Some(evil.into()),
                id: Some("m1".into()),
                message: Some(entry),
                ..Event::new(Kind::Message, "demo", "2026-11-29T10:00:01.000Z")
            }],
            warnings: Vec::new(),
        });
        a.timeline = t;
        let screens = [
            crate::cli::tui::app::Mode::Normal,
            crate::cli::tui::app::Mode::Inbox {
                member: "alice".into(),
                scroll: 0,
            },
            crate::cli::tui::app::Mode::Request {
                id: "perm-1-abc".into(),
                scroll: 0,
            },
        ];
        for mode in screens {
            a.mode = mode;
            let buf = buffer(&a, now(), 100, 30);
            for c in &buf.content {
                assert!(
                    !c.symbol().chars().any(hostile),
                    "a control character reached the screen: {:?}",
                    c.symbol()
                );
            }
            let text = render_text(&buf);
            assert!(text.contains("\\e]0;PWNED\\x07"), "{text}");
        }
        // The inbox shows the text's lines, each escaped, never a raw line break.
        assert!(render_text(&buffer(&a, now(), 100, 30)).contains("\\u{202e}evil\\u{2066}\\r"));
    }

    fn render_text(buf: &Buffer) -> String {
        text(buf)
    }

    #[test]
    fn no_color_means_no_colour() {
        let mut a = app();
        a.colors = false;
        for c in &buffer(&a, now(), 100, 30).content {
            assert_eq!((c.fg, c.bg), (Color::Reset, Color::Reset), "{c:?}");
        }
        // With colour, some.
        a.colors = true;
        assert!(
            buffer(&a, now(), 100, 30)
                .content
                .iter()
                .any(|c| c.fg != Color::Reset)
        );
    }

    #[test]
    fn keys_select_write_and_answer() {
        use crossterm::event::KeyCode::*;
        let mut a = app();
        assert_eq!(a.member.as_deref(), Some("team-lead"));
        key(&mut a, Down);
        key(&mut a, Char('j'));
        assert_eq!(a.member.as_deref(), Some("bob"));
        key(&mut a, Char('k'));
        assert_eq!(a.member.as_deref(), Some("alice"));
        // m: a one-line input, sent on Enter.
        key(&mut a, Char('m'));
        for c in "hi there".chars() {
            key(&mut a, Char(c));
        }
        key(&mut a, Left);
        key(&mut a, Backspace);
        let text = frame_text(&a, now(), 80, 24);
        assert!(
            text.lines()
                .last()
                .unwrap()
                .starts_with("to alice› hi thee"),
            "{text}"
        );
        assert_eq!(
            key(&mut a, Enter),
            Effect::Send {
                to: "alice".into(),
                text: "hi thee".into()
            }
        );
        // a, then y: the selected request.
        key(&mut a, Char('a'));
        let text = frame_text(&a, now(), 100, 24);
        assert!(
            text.contains("approve perm-1-abc from alice (Bash: npm test)? y: yes"),
            "{text}"
        );
        match key(&mut a, Char('y')) {
            Effect::Answer(ans) => assert!(ans.approve && ans.id == "perm-1-abc"),
            e => panic!("{e:?}"),
        }
        // d: a reason first (the default when empty), then y; anything else cancels.
        key(&mut a, Char('d'));
        key(&mut a, Enter);
        assert_eq!(key(&mut a, Char('n')), Effect::None);
        assert_eq!(a.notice.as_ref().unwrap().text, "not answered");
        key(&mut a, Char('d'));
        for c in "no".chars() {
            key(&mut a, Char(c));
        }
        key(&mut a, Enter);
        match key(&mut a, Char('y')) {
            Effect::Answer(ans) => assert!(!ans.approve && ans.reason == "no"),
            e => panic!("{e:?}"),
        }
        // In a team teamctl does not lead, answering is refused with approve's words.
        a.refusal = Some("refusing to answer as team-lead".into());
        key(&mut a, Char('a'));
        assert!(frame_text(&a, now(), 80, 24).contains("refusing to answer as team-lead"));
        // Tab reaches the requests, Enter shows one in full.
        a.refusal = None;
        key(&mut a, Tab);
        key(&mut a, Tab);
        assert_eq!(a.focus, crate::cli::tui::app::Pane::Requests);
        key(&mut a, Enter);
        let text = frame_text(&a, now(), 80, 24);
        assert!(
            text.contains("tool: Bash") && text.contains("\"command\": \"npm test\""),
            "{text}"
        );
        key(&mut a, Esc);
        // Enter on a member: its story; i its inbox; Esc back; q quits; Ctrl-C quits even
        // while typing.
        key(&mut a, BackTab);
        key(&mut a, BackTab);
        key(&mut a, Enter);
        assert!(frame_text(&a, now(), 80, 24).contains("Story of alice"));
        key(&mut a, Char('i'));
        assert!(frame_text(&a, now(), 80, 24).contains("Inbox of alice"));
        key(&mut a, Char('l'));
        assert!(frame_text(&a, now(), 80, 24).contains("Story of alice"));
        key(&mut a, Esc);
        assert_eq!(a.mode, crate::cli::tui::app::Mode::Normal);
        key(&mut a, Char('i'));
        assert!(frame_text(&a, now(), 80, 24).contains("Inbox of alice"));
        key(&mut a, Esc);
        assert_eq!(a.mode, crate::cli::tui::app::Mode::Normal);
        key(&mut a, Char('m'));
        let ctrl_c =
            crossterm::event::KeyEvent::new(Char('c'), crossterm::event::KeyModifiers::CONTROL);
        assert_eq!(a.key(ctrl_c), Effect::Quit);
        assert_eq!(key(&mut app(), Char('q')), Effect::Quit);
        // ? shows the keys.
        let mut b = app();
        key(&mut b, Char('?'));
        assert!(frame_text(&b, now(), 80, 24).contains("approve the selected request"));
    }
}
