//! Drawing the live view with ratatui: the header, the members table, the task board, the
//! requests waiting for the lead, the message timeline and the footer; a member's story, its
//! inbox, a request in full and the help as screens of their own. Every string from the team's files
//! goes through [`crate::cli::term::escape_line`] first: ratatui drops C0 and C1 controls but
//! passes bidi overrides and would leave the rest of an escape sequence on screen.

use chrono::{DateTime, Utc};
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Clear, HighlightSpacing, Paragraph, Row, Table};
use teamctl::observe::status::State;
use teamctl::observe::top::{Card, Delivery, MemberRow, Message, RequestRow};
use teamctl::team::protocol::Kind;
use teamctl::units::{self, count, usd};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::cli::output::log_line;
use crate::cli::term::{cut, escape_line};
use crate::cli::tui::app::{App, Mode, Pane};

/// Teammate text as one safe line.
fn esc(s: &str) -> String {
    escape_line(s).into_owned()
}

/// Styles, or none of them under `NO_COLOR` (bold and reverse stay: they are not colour).
struct Theme {
    color: bool,
}

impl Theme {
    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }
    fn dim(&self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new()
        }
    }
    fn bold(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }
    fn title(&self, focused: bool) -> Style {
        if focused {
            self.bold().add_modifier(Modifier::REVERSED)
        } else {
            self.bold()
        }
    }
    fn alert(&self) -> Style {
        if self.color {
            Style::new()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED)
        }
    }
    fn error(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    /// A member's palette colour (Claude Code's eight).
    fn member(&self, color: Option<&str>) -> Style {
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
    fn state(&self, s: State) -> Style {
        match s {
            State::Active => self.fg(Color::Green),
            State::Idle => self.fg(Color::Yellow),
            State::Terminated => self.fg(Color::Red),
            State::Unknown => self.dim(),
        }
    }
}

/// `5s`, `3m`, `2h`, `4d`; `-` for no time.
fn ago(now: DateTime<Utc>, at: Option<&str>) -> String {
    at.and_then(|a| since(now, a)).unwrap_or_else(|| "-".into())
}

/// How long ago `at` was (as [`units::age`]); `None` when it is not a time.
fn since(now: DateTime<Utc>, at: &str) -> Option<String> {
    let t = DateTime::parse_from_rfc3339(at).ok()?;
    Some(units::age((now - t.with_timezone(&Utc)).num_seconds()))
}

/// `19:35:00` (UTC, as `watch` prints times).
fn clock(at: &str) -> String {
    match DateTime::parse_from_rfc3339(at) {
        Ok(t) => t.with_timezone(&Utc).format("%H:%M:%S").to_string(),
        Err(_) => "--:--:--".into(),
    }
}

/// Breaks safe text into lines of at most `width` columns, at a space where one is near.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut line = String::new();
    let mut w = 0;
    for c in text.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw > width && !line.is_empty() {
            if c == ' ' {
                out.push(std::mem::take(&mut line));
                w = 0;
                continue;
            }
            // Carry the last word over when the break would split it.
            match line.rfind(' ') {
                Some(i) if line[..i].width() >= width / 2 => {
                    let rest = line.split_off(i + 1);
                    out.push(line.trim_end().to_string());
                    w = rest.width();
                    line = rest;
                }
                _ => {
                    out.push(std::mem::take(&mut line));
                    w = 0;
                }
            }
        }
        line.push(c);
        w += cw;
    }
    out.push(line);
    out
}

/// How tall each part of the dashboard is in `h` rows: members, tasks, requests, messages.
/// Everything gets what it needs when that leaves the messages four rows; otherwise the
/// members take at most two fifths, the tasks a quarter and the requests five rows.
fn heights(app: &App, h: u16) -> [u16; 4] {
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
    match &app.mode {
        Mode::Story { member, scroll } => story(f, app, &t, body, member, *scroll),
        Mode::Inbox { member, scroll } => inbox(f, app, &t, body, member, *scroll),
        Mode::Request { id, scroll } => request(f, app, &t, body, id, *scroll, now),
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

/// The header: the team, its lead, its age, its cost, the last change, problems, you; parts
/// that do not fit whole are left out from the end.
fn header(app: &App, t: &Theme, now: DateTime<Utc>, width: u16) -> Line<'static> {
    let h = &app.view.team;
    let mut parts: Vec<Vec<Span<'static>>> = Vec::new();
    let mut lead = Vec::new();
    if let Some(name) = &h.lead {
        lead.push(Span::raw("lead "));
        lead.push(Span::styled(esc(name), t.bold()));
        match h.lead_alive {
            Some(true) => lead.push(Span::styled(" (running)", t.fg(Color::Green))),
            Some(false) => lead.push(Span::styled(" (not running)", t.fg(Color::Red))),
            None => {}
        }
        parts.push(lead);
    }
    if let Some(up) = h.created_at.as_deref().and_then(|c| since(now, c)) {
        parts.push(vec![Span::raw(format!("up {up}"))]);
    }
    match (h.cost_usd, &h.tokens) {
        (Some(cost), _) => parts.push(vec![Span::styled(usd(cost), t.bold())]),
        (None, Some(tokens)) => parts.push(vec![Span::raw(format!(
            "{} tokens, cost unknown",
            count(tokens.total())
        ))]),
        (None, None) => {}
    }
    // The last change, with its clock time when there is room.
    let mut short = None;
    parts.push(match &app.trouble {
        Some(why) => vec![Span::styled(esc(why), t.error())],
        None => vec![Span::raw(match &h.last_change_at {
            Some(at) => {
                let ago = ago(now, Some(at.as_str()));
                short = Some((parts.len(), format!("last change {ago} ago")));
                format!("last change {} ({ago} ago)", clock(at))
            }
            None => "no change yet".into(),
        })],
    });
    if !app.view.warnings.is_empty() {
        let n = app.view.warnings.len();
        parts.push(vec![Span::styled(
            format!("{n} unreadable file{}", if n == 1 { "" } else { "s" }),
            t.error(),
        )]);
    }
    parts.push(vec![Span::styled(
        format!("you: {}", esc(&app.identity)),
        t.dim(),
    )]);
    let mut spans = vec![
        Span::styled(format!(" {} ", esc(&h.name)), t.title(true)),
        Span::raw(" "),
    ];
    let mut used: usize = spans.iter().map(Span::width).sum();
    for (i, part) in parts.into_iter().enumerate() {
        let sep = if i == 0 { 0 } else { 3 };
        let w: usize = part.iter().map(Span::width).sum();
        let mut part = part;
        let mut w = w;
        if used + sep + w > usize::from(width)
            && let Some((_, text)) = short.as_ref().filter(|(at, _)| *at == i)
        {
            part = vec![Span::raw(text.clone())];
            w = text.width();
        }
        // The first part (or the trouble) is cut rather than left out.
        if used + sep + w > usize::from(width) && i > 0 {
            break;
        }
        if i > 0 {
            spans.push(Span::styled(" · ", t.dim()));
        }
        used += sep + w;
        spans.extend(part);
    }
    Line::from(spans)
}

fn pane<'a>(t: &Theme, title: String, focused: bool) -> Block<'a> {
    Block::new()
        .borders(Borders::TOP)
        .border_style(t.dim())
        .title(Span::styled(title, t.title(focused)))
}

fn dashboard(f: &mut Frame, app: &App, t: &Theme, area: Rect, now: DateTime<Utc>) {
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

/// A member's COST cell: `$0.42`; `12.3k tok` for a model without a price; `-` without a
/// transcript.
fn cost_cell(m: &MemberRow) -> String {
    match (m.cost_usd, &m.tokens) {
        (Some(c), _) => usd(c),
        (None, Some(tokens)) => format!("{} tok", count(tokens.total())),
        (None, None) => "-".into(),
    }
}

/// A member's DOING cell, cut to `width` columns with its age kept: `Bash: npm test (5s)`.
fn doing_cell(m: &MemberRow, now: DateTime<Utc>, width: usize) -> String {
    let Some(what) = &m.doing else {
        return String::new();
    };
    let age = m
        .activity
        .as_ref()
        .and_then(|a| a.at.as_deref())
        .filter(|at| DateTime::parse_from_rfc3339(at).is_ok())
        .map(|at| format!(" ({})", ago(now, Some(at))))
        .unwrap_or_default();
    let what = esc(what);
    if what.width() + age.width() <= width {
        return format!("{what}{age}");
    }
    let room = width.saturating_sub(age.width());
    if room < 6 {
        return cut(&what, width);
    }
    // A path is told by its end: `Read: …/auth/session.ts`.
    if let Some((tool, path)) = what.split_once(": ")
        && path.contains('/')
        && !path.contains(char::is_whitespace)
        && tool.width() + 4 < room
    {
        return format!("{tool}: {}{age}", cut_front(path, room - tool.width() - 2));
    }
    format!("{}{age}", cut(&what, room))
}

/// `text` (already escaped) cut from the front to at most `max` columns, with `…` when cut.
fn cut_front(text: &str, max: usize) -> String {
    if text.width() <= max {
        return text.to_string();
    }
    let mut kept: Vec<char> = Vec::new();
    let mut used = 1;
    for c in text.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > max {
            break;
        }
        used += w;
        kept.push(c);
    }
    std::iter::once('…').chain(kept.into_iter().rev()).collect()
}

fn members(f: &mut Frame, app: &App, t: &Theme, area: Rect, now: DateTime<Utc>) {
    let v = &app.view;
    let focused = app.focus == Pane::Members;
    let block = pane(t, format!(" Members ({}) ", v.members.len()), focused);
    let doing = v.members.iter().any(|m| m.doing.is_some());
    let cost = v
        .members
        .iter()
        .any(|m| m.tokens.is_some() || m.cost_usd.is_some());
    let alive = v.members.iter().any(|m| m.process_alive.is_some());
    let fit = |head: &str, cells: &mut dyn Iterator<Item = usize>| -> u16 {
        u16::try_from(cells.chain([head.width()]).max().unwrap_or(4)).unwrap_or(u16::MAX)
    };
    let name_w = fit("NAME", &mut v.members.iter().map(|m| esc(&m.name).width())).clamp(4, 18);
    let state_w = fit(
        "STATE",
        &mut v.members.iter().map(|m| m.state.to_string().width()),
    );
    let waiting_w = fit(
        "WAITING",
        &mut v
            .members
            .iter()
            .map(|m| esc(m.waiting.as_deref().unwrap_or("")).width()),
    )
    .min(10);
    let cost_w = fit("COST", &mut v.members.iter().map(|m| cost_cell(m).width()));
    let mut head = vec!["NAME", "STATE", "WAITING"];
    let mut widths = vec![
        Constraint::Length(name_w),
        Constraint::Length(state_w),
        Constraint::Length(waiting_w),
    ];
    let mut fixed = name_w + state_w + waiting_w;
    if doing {
        head.push("DOING");
        widths.push(Constraint::Fill(1));
    }
    if cost {
        head.push("COST");
        widths.push(Constraint::Length(cost_w));
        fixed += cost_w;
    }
    head.extend(["UNREAD", "TASKS", "SEEN"]);
    widths.extend([
        Constraint::Length(6),
        Constraint::Length(5),
        Constraint::Length(4),
    ]);
    fixed += 6 + 5 + 4;
    if alive {
        head.push("ALIVE");
        widths.push(Constraint::Length(5));
        fixed += 5;
    }
    // What is left for DOING: the width less the highlight mark, the fixed columns and the
    // spaces between the columns. DOING is the one that narrows.
    let gaps = u16::try_from(widths.len().saturating_sub(1)).unwrap_or(0);
    let doing_w = usize::from(area.width.saturating_sub(2 + fixed + gaps));
    let rows = v.members.iter().map(|m| {
        let mut cells = vec![
            Cell::from(Span::styled(esc(&m.name), t.member(m.color.as_deref()))),
            Cell::from(Span::styled(m.state.to_string(), t.state(m.state))),
            Cell::from(Span::styled(
                esc(m.waiting.as_deref().unwrap_or("")),
                t.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            )),
        ];
        if doing {
            let style = match m.activity.as_ref().map(|a| a.kind.as_str()) {
                Some("tool_use") => t.fg(Color::Cyan),
                _ => Style::new(),
            };
            cells.push(Cell::from(Span::styled(doing_cell(m, now, doing_w), style)));
        }
        if cost {
            cells.push(Cell::from(cost_cell(m)));
        }
        let unread = if m.unread > 0 {
            Span::styled(m.unread.to_string(), t.bold())
        } else {
            Span::styled("0", t.dim())
        };
        cells.extend([
            Cell::from(unread),
            Cell::from(format!("{}/{}", m.tasks_in_progress, m.tasks_owned)),
            Cell::from(ago(now, m.last_event_at.as_deref())),
        ]);
        if alive {
            cells.push(Cell::from(match m.process_alive {
                Some(true) => Span::styled("yes", t.fg(Color::Green)),
                Some(false) => Span::styled("no", t.fg(Color::Red)),
                None => Span::styled("-", t.dim()),
            }));
        }
        Row::new(cells)
    });
    let selected = if focused {
        Style::new().add_modifier(Modifier::REVERSED)
    } else {
        Style::new().add_modifier(Modifier::BOLD)
    };
    let table = Table::new(rows, widths)
        .header(Row::new(head).style(t.dim()))
        .column_spacing(1)
        .row_highlight_style(selected)
        .highlight_symbol("› ")
        .highlight_spacing(HighlightSpacing::Always)
        .block(block);
    let mut state = ratatui::widgets::TableState::default().with_selected(app.member_index());
    f.render_stateful_widget(table, area, &mut state);
}

/// A task on the board: `#2 Fix the race`, and under it, when there is any, who owns it and
/// what blocks it (`@alice`, `blocked by #1`).
fn card(c: &Card, t: &Theme, column: &str) -> Vec<Line<'static>> {
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
fn card_height(c: &Card) -> usize {
    if c.owner.is_some() || !c.blocked_by.is_empty() {
        2
    } else {
        1
    }
}

/// The tallest column of the board, in lines.
fn board_height(app: &App) -> usize {
    let b = &app.view.tasks;
    [&b.pending, &b.in_progress, &b.completed]
        .iter()
        .map(|col| col.iter().map(card_height).sum::<usize>())
        .max()
        .unwrap_or(0)
}

fn tasks(f: &mut Frame, app: &App, t: &Theme, area: Rect) {
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

fn kind_label(k: Kind) -> &'static str {
    match k {
        Kind::Permission => "permission",
        Kind::PlanApproval => "plan",
        Kind::SandboxPermission => "sandbox",
    }
}

fn requests(f: &mut Frame, app: &App, t: &Theme, area: Rect, now: DateTime<Utc>) {
    let v = &app.view;
    let focused = app.focus == Pane::Requests;
    let title = format!(
        " Waiting for the lead ({}) · a approve · d deny · ⏎ details ",
        v.requests.len()
    );
    let block = Block::new()
        .borders(Borders::TOP)
        .border_style(t.fg(Color::Yellow))
        .title(Span::styled(
            title,
            if focused {
                t.alert().add_modifier(Modifier::UNDERLINED)
            } else {
                t.alert()
            },
        ));
    let sel = app.request_index();
    let rows = v.requests.iter().map(|r: &RequestRow| {
        Row::new(vec![
            Cell::from(Span::styled(esc(&r.from), t.bold())),
            Cell::from(kind_label(r.kind)),
            Cell::from(ago(now, Some(r.at.as_str()))),
            Cell::from(Span::styled(esc(&r.summary), t.fg(Color::Yellow))),
        ])
    });
    let table = Table::new(
        rows,
        [
            Constraint::Length(12),
            Constraint::Length(10),
            Constraint::Length(4),
            Constraint::Fill(1),
        ],
    )
    .column_spacing(1)
    .row_highlight_style(if focused {
        Style::new().add_modifier(Modifier::REVERSED)
    } else {
        Style::new().add_modifier(Modifier::BOLD)
    })
    .highlight_symbol("› ")
    .highlight_spacing(HighlightSpacing::Always)
    .block(block);
    let mut state = ratatui::widgets::TableState::default().with_selected(sel);
    f.render_stateful_widget(table, area, &mut state);
}

fn message_line(m: &Message, t: &Theme, colors: &dyn Fn(&str) -> Option<String>) -> Line<'static> {
    let unread = match m.delivery {
        Delivery::Unread => Span::styled("● ", t.fg(Color::Cyan).add_modifier(Modifier::BOLD)),
        Delivery::Read | Delivery::Delivered => Span::raw("  "),
    };
    let preview_style = match m.frame.as_deref() {
        Some(f) if f.ends_with("_request") && f != "shutdown_request" => {
            t.fg(Color::Yellow).add_modifier(Modifier::BOLD)
        }
        Some(_) => t.fg(Color::Cyan),
        None => Style::new(),
    };
    Line::from(vec![
        Span::styled(format!("{} ", clock(&m.at)), t.dim()),
        unread,
        Span::styled(esc(&m.from), t.member(colors(&m.from).as_deref())),
        Span::styled(" → ", t.dim()),
        Span::styled(esc(&m.to), t.member(colors(&m.to).as_deref())),
        Span::raw("  "),
        Span::styled(esc(&m.preview), preview_style),
    ])
}

fn messages(f: &mut Frame, app: &App, t: &Theme, area: Rect) {
    let all = &app.view.messages;
    let focused = app.focus == Pane::Messages;
    let h = usize::from(area.height.saturating_sub(1));
    let max_scroll = all.len().saturating_sub(h);
    let scroll = app.messages_scroll.min(max_scroll);
    let end = all.len() - scroll;
    let start = end.saturating_sub(h);
    let unread = all
        .iter()
        .filter(|m| m.delivery == Delivery::Unread)
        .count();
    let mut title = format!(" Messages ({}, {unread} unread) ", all.len());
    if scroll > 0 {
        title.push_str(&format!("↑{scroll} "));
    }
    let colors = |name: &str| app.view.member(name).and_then(|m| m.color.clone());
    let lines: Vec<Line> = all[start..end]
        .iter()
        .map(|m| message_line(m, t, &colors))
        .collect();
    let block = pane(t, title, focused);
    f.render_widget(Paragraph::new(lines).block(block), area);
}

/// Lines of the body of a detail screen, each already safe, wrapped to `width`.
fn scrolled_lines(
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

/// A member's story: its transcript as `teamctl log --follow` prints it, newest last, growing.
fn story(f: &mut Frame, app: &App, t: &Theme, area: Rect, member: &str, scroll: usize) {
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

fn inbox(f: &mut Frame, app: &App, t: &Theme, area: Rect, member: &str, scroll: usize) {
    let width = usize::from(area.width.saturating_sub(4));
    let msgs: Vec<&Message> = app.timeline.inbox_of(member).collect();
    let unread = msgs
        .iter()
        .filter(|m| m.delivery == Delivery::Unread)
        .count();
    let mut lines: Vec<Line> = Vec::new();
    for m in &msgs {
        let state = match m.delivery {
            Delivery::Unread => {
                Span::styled("● unread", t.fg(Color::Cyan).add_modifier(Modifier::BOLD))
            }
            Delivery::Read => Span::styled("read", t.dim()),
            Delivery::Delivered => Span::styled("taken", t.dim()),
        };
        let mut head = vec![
            Span::styled(
                format!(
                    "{} ",
                    m.at.get(..19).map_or(m.at.clone(), |s| s.replace('T', " "))
                ),
                t.dim(),
            ),
            Span::raw("from "),
            Span::styled(esc(&m.from), t.bold()),
            Span::raw("  "),
            state,
        ];
        if let Some(fr) = &m.frame {
            head.push(Span::styled(format!("  [{}]", esc(fr)), t.fg(Color::Cyan)));
        }
        lines.push(Line::from(head));
        // A frame is compact JSON: shown indented, one field a line.
        let pretty = m.frame.as_ref().and(m.text.as_deref()).and_then(|t| {
            serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(t).ok()?).ok()
        });
        match pretty.as_ref().or(m.text.as_ref()) {
            Some(text) => {
                for raw in text.split('\n') {
                    for part in wrap(&esc(raw), width) {
                        lines.push(Line::from(vec![
                            Span::styled("  │ ", t.dim()),
                            Span::raw(part),
                        ]));
                    }
                }
            }
            None => lines.push(Line::from(vec![
                Span::styled("  │ ", t.dim()),
                Span::styled(format!("(sent by teamctl: {})", esc(&m.preview)), t.dim()),
            ])),
        }
    }
    if msgs.is_empty() {
        lines.push(Line::from(Span::styled(
            "(nothing seen in this inbox yet)",
            t.dim(),
        )));
    }
    let title = format!(
        " Inbox of {} ({} messages, {unread} unread) · ↑↓ scroll · l story · m message · Esc back ",
        esc(member),
        msgs.len()
    );
    let block = pane(t, title, true);
    let h = usize::from(area.height.saturating_sub(1));
    f.render_widget(
        Paragraph::new(scrolled_lines(lines, h, scroll, true)).block(block),
        area,
    );
}

fn request(
    f: &mut Frame,
    app: &App,
    t: &Theme,
    area: Rect,
    id: &str,
    scroll: usize,
    now: DateTime<Utc>,
) {
    let width = usize::from(area.width.saturating_sub(4)).max(10);
    let mut lines: Vec<Line> = Vec::new();
    let block_of = |label: &str, text: &str, lines: &mut Vec<Line<'static>>| {
        lines.push(Line::from(Span::styled(label.to_string(), t.bold())));
        for raw in text.split('\n') {
            for part in wrap(&esc(raw), width) {
                lines.push(Line::from(vec![
                    Span::styled("  │ ", t.dim()),
                    Span::raw(part),
                ]));
            }
        }
    };
    match app.view.requests.iter().find(|r| r.request_id == id) {
        None => lines.push(Line::from(Span::styled(
            "answered or withdrawn: it is no longer waiting",
            t.dim(),
        ))),
        Some(r) => {
            let q = &r.request;
            lines.push(Line::from(vec![
                Span::raw(format!("{} from ", kind_label(r.kind))),
                Span::styled(esc(&r.from), t.bold()),
                Span::raw(format!(", asked {} ago", ago(now, Some(r.at.as_str())))),
            ]));
            lines.push(Line::from(Span::styled(
                format!("id {}", esc(&r.request_id)),
                t.dim(),
            )));
            lines.push(Line::default());
            if let Some(tool) = &q.tool_name {
                lines.push(Line::from(vec![
                    Span::styled("tool: ", t.bold()),
                    Span::raw(esc(tool)),
                ]));
            }
            if let Some(d) = &q.description {
                block_of("description:", d, &mut lines);
            }
            if let Some(input) = &q.input {
                let pretty = serde_json::to_string_pretty(input).unwrap_or_default();
                block_of("input:", &pretty, &mut lines);
            }
            if let Some(h) = &q.host {
                lines.push(Line::from(vec![
                    Span::styled("host: ", t.bold()),
                    Span::raw(esc(h)),
                ]));
            }
            if let Some(p) = &q.plan_file_path {
                lines.push(Line::from(vec![
                    Span::styled("plan file: ", t.bold()),
                    Span::raw(esc(p)),
                ]));
            }
            if let Some(p) = &q.plan_content {
                block_of("plan:", p, &mut lines);
            }
        }
    }
    let block = pane(t, format!(" Request {} ", esc(id)), true);
    let h = usize::from(area.height.saturating_sub(1));
    f.render_widget(
        Paragraph::new(scrolled_lines(lines, h, scroll, false)).block(block),
        area,
    );
}

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

fn help(f: &mut Frame, t: &Theme, area: Rect) {
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

/// The prompt of the input being typed, and the input.
fn prompt(app: &App) -> Option<(String, &crate::cli::tui::app::Input)> {
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
fn input_window(prompt: &str, input: &crate::cli::tui::app::Input, width: u16) -> (String, u16) {
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
fn footer(app: &App, t: &Theme, width: u16) -> Vec<Line<'static>> {
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
    use serde_json::json;
    use teamctl::observe::top::Timeline;
    use teamctl::observe::watch::{Changes, Event};

    use std::collections::VecDeque;

    use teamctl::observe::log::LogLine;
    use teamctl::team::transcript::story::Kind;

    use super::*;
    use crate::cli::tui::app::{Effect, Story};
    use crate::cli::tui::fixture::{app, now};
    use crate::cli::tui::frame_text;

    fn buffer(app: &App, w: u16, h: u16) -> Buffer {
        let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
        term.draw(|f| draw(f, app, now())).unwrap();
        term.backend().buffer().clone()
    }

    fn key(app: &mut App, code: crossterm::event::KeyCode) -> Effect {
        app.key(crossterm::event::KeyEvent::from(code))
    }

    /// Every character a terminal could act on, as `term.rs` counts them.
    fn hostile(c: char) -> bool {
        matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{61c}' | '\u{200e}'
            | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }

    #[test]
    fn a_team_at_80_by_24() {
        let text = frame_text(&app(), now(), 80, 24);
        let want =
            " demo  lead team-lead (running) · up 2h · $1.62 · last change 10:00:20 (10s ago)
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
                schema_version: 1,
                event: "message",
                team: "demo".into(),
                at: "2026-11-29T10:00:01.000Z".into(),
                to: Some("alice".into()),
                from: Some(evil.into()),
                id: Some("m1".into()),
                member: None,
                message: Some(entry),
                task: None,
                member_entry: None,
                changes: None,
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
            let buf = buffer(&a, 100, 30);
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
        assert!(render_text(&buffer(&a, 100, 30)).contains("\\u{202e}evil\\u{2066}\\r"));
    }

    fn render_text(buf: &Buffer) -> String {
        text(buf)
    }

    #[test]
    fn no_color_means_no_colour() {
        let mut a = app();
        a.colors = false;
        for c in &buffer(&a, 100, 30).content {
            assert_eq!((c.fg, c.bg), (Color::Reset, Color::Reset), "{c:?}");
        }
        // With colour, some.
        a.colors = true;
        assert!(
            buffer(&a, 100, 30)
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
        let want = " demo  lead team-lead (running) · up 2h · $1.62 · last change 10:00:20 (10s ago) · you: team-lead
 Story of alice (3 events, 1 transcript) · ↑↓ scroll · i inbox · m message · Esc back ──────────────
skipped: projects/x/s.jsonl is a symlink
09:59:00  message      from team-lead: fix the race
10:00:01  text         Looking.\\e]52;c;aGk=\\x07\\u{202e}
10:00:25  tool_use     Bash: npm test





↑↓ scroll  i inbox  m message  Esc back  q quit
";
        assert_eq!(text, want, "got:\n{text}");
        // The same lines as `teamctl log` prints.
        for l in &a.story.as_ref().unwrap().lines {
            assert!(text.contains(&crate::cli::output::log_line(l)), "{text}");
        }
        // No control character reaches the screen.
        for c in &buffer(&a, 100, 12).content {
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

    #[test]
    fn doing_narrows_first_and_keeps_its_age() {
        let mut a = app();
        a.view.members[1].doing =
            Some("Bash: npm test -- --run the whole suite again please".into());
        let narrow = frame_text(&a, now(), 80, 24);
        let row = narrow.lines().find(|l| l.contains("alice")).unwrap();
        assert!(row.contains("Bash: npm test… (5s) $0.42"), "{narrow}");
        // A path keeps its end.
        a.view.members[0].doing = Some("Read: /home/alice/src/app/src/auth/session.ts".into());
        let narrow = frame_text(&a, now(), 80, 24);
        assert!(narrow.contains("Read: …sion.ts (20s)"), "{narrow}");
        let wide = frame_text(&a, now(), 140, 24);
        assert!(
            wide.contains("Bash: npm test -- --run the whole suite again please (5s)"),
            "{wide}"
        );
        // Cost unknown (a model without a price): the tokens; no transcript: a dash.
        a.view.members[1].cost_usd = None;
        a.view.team.cost_usd = None;
        let text = frame_text(&a, now(), 100, 24);
        assert!(text.contains("500 tok"), "{text}");
        assert!(text.contains("1.5k tokens, cost unknown"), "{text}");
        // A team without transcripts has neither column.
        for m in &mut a.view.members {
            (m.doing, m.activity, m.cost_usd, m.tokens) = (None, None, None, None);
        }
        let text = frame_text(&a, now(), 100, 24);
        assert!(!text.contains("DOING") && !text.contains("COST"), "{text}");
    }

    #[test]
    fn wrap_breaks_at_spaces_and_counts_wide_characters() {
        assert_eq!(wrap("aaa bbb ccc", 7), ["aaa bbb", "ccc"]);
        assert_eq!(wrap("日本語日本語", 6), ["日本語", "日本語"]);
        assert_eq!(wrap("", 5), [""]);
    }
}
