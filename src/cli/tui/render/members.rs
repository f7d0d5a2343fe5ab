//! The members table: who, in what state, waiting on what, doing what (the one column that
//! narrows), at what cost, how full its context, on which branch, with how much unread, how
//! many tasks, last seen, alive.

use chrono::{DateTime, Utc};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Cell, HighlightSpacing, Row, Table};
use teamctl::observe::top::MemberRow;
use teamctl::units::{count, usd};
use unicode_width::UnicodeWidthStr;

use super::theme::{Theme, esc, pane};
use super::words::{age_at, cut_front};
use crate::cli::term::cut;
use crate::cli::tui::app::{App, Pane};

/// A member's COST cell: `$0.42`; `12.3k tok` for a model without a price; `-` without a
/// transcript.
pub(super) fn cost_cell(m: &MemberRow) -> String {
    match (m.cost_usd, &m.tokens) {
        (Some(c), _) => usd(c),
        (None, Some(tokens)) => format!("{} tok", count(tokens.total())),
        (None, None) => "-".into(),
    }
}

/// A member's CONTEXT cell: `12.5%` of its window, its tokens for a model without a known
/// window, `-` before its first response.
pub(super) fn context_cell(m: &MemberRow) -> String {
    m.context.map_or_else(
        || "-".into(),
        |c| teamctl::units::context(c.used, c.percent),
    )
}

/// A member's BRANCH cell: `teamctl/review/alice +3` (files changed since its start), `-`
/// without a worktree.
pub(super) fn branch_cell(m: &MemberRow) -> String {
    m.worktree.as_ref().map_or_else(
        || "-".into(),
        |w| {
            let changed = w.changed.map_or("?".into(), |n| n.to_string());
            format!("{} +{changed}", esc(&w.branch))
        },
    )
}

/// A member's DOING cell, cut to `width` columns with its age kept: `Bash: npm test (5s)`.
pub(super) fn doing_cell(m: &MemberRow, now: DateTime<Utc>, width: usize) -> String {
    let Some(what) = &m.doing else {
        return String::new();
    };
    let age = m
        .activity
        .as_ref()
        .and_then(|a| a.at.as_deref())
        .filter(|at| DateTime::parse_from_rfc3339(at).is_ok())
        .map(|at| format!(" ({})", age_at(now, Some(at))))
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

/// Which columns the members' table shows, and how wide: DOING, COST, CONTEXT, BRANCH and ALIVE
/// only when some member has something to show there (CONTEXT and BRANCH only while DOING keeps
/// room), DOING taking what the others leave.
struct Columns {
    doing: bool,
    cost: bool,
    context: bool,
    branch: bool,
    alive: bool,
    branch_w: u16,
    doing_w: usize,
    head: Vec<&'static str>,
    widths: Vec<Constraint>,
}

impl Columns {
    /// The columns for `members` in a pane `width` columns wide.
    fn plan(members: &[MemberRow], width: u16) -> Columns {
        let doing = members.iter().any(|m| m.doing.is_some());
        let cost = members
            .iter()
            .any(|m| m.tokens.is_some() || m.cost_usd.is_some());
        let alive = members.iter().any(|m| m.process_alive.is_some());
        let mut context = members.iter().any(|m| m.context.is_some());
        let mut branch = members.iter().any(|m| m.worktree.is_some());
        let fit = |head: &str, cells: &mut dyn Iterator<Item = usize>| -> u16 {
            u16::try_from(cells.chain([head.width()]).max().unwrap_or(4)).unwrap_or(u16::MAX)
        };
        let name_w = fit("NAME", &mut members.iter().map(|m| esc(&m.name).width())).clamp(4, 18);
        let state_w = fit(
            "STATE",
            &mut members.iter().map(|m| m.state.to_string().width()),
        );
        let waiting_w = fit(
            "WAITING",
            &mut members
                .iter()
                .map(|m| esc(m.waiting.as_deref().unwrap_or("")).width()),
        )
        .min(10);
        let cost_w = fit("COST", &mut members.iter().map(|m| cost_cell(m).width()));
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
        let context_w = fit(
            "CONTEXT",
            &mut members.iter().map(|m| context_cell(m).width()),
        );
        let branch_w = fit(
            "BRANCH",
            &mut members.iter().map(|m| branch_cell(m).width()),
        )
        .min(28);
        // CONTEXT and BRANCH only where DOING keeps room to say something (BRANCH goes first).
        let rest = fixed + 6 + 5 + 4 + 5 * u16::from(alive) + 12;
        let room = |extra: u16| width.saturating_sub(rest + extra) >= 30;
        branch &= room(branch_w + context_w * u16::from(context));
        context &= room(context_w + branch_w * u16::from(branch));
        if context {
            head.push("CONTEXT");
            widths.push(Constraint::Length(context_w));
            fixed += context_w;
        }
        if branch {
            head.push("BRANCH");
            widths.push(Constraint::Length(branch_w));
            fixed += branch_w;
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
        let doing_w = usize::from(width.saturating_sub(2 + fixed + gaps));
        Columns {
            doing,
            cost,
            context,
            branch,
            alive,
            branch_w,
            doing_w,
            head,
            widths,
        }
    }

    /// One member's row.
    fn row(&self, m: &MemberRow, t: &Theme, now: DateTime<Utc>) -> Row<'static> {
        let mut cells = vec![
            Cell::from(Span::styled(esc(&m.name), t.member(m.color.as_deref()))),
            Cell::from(Span::styled(m.state.to_string(), t.state(m.state))),
            Cell::from(Span::styled(
                esc(m.waiting.as_deref().unwrap_or("")),
                t.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            )),
        ];
        if self.doing {
            let style = match m.activity.as_ref().map(|a| a.kind.as_str()) {
                Some("tool_use") => t.fg(Color::Cyan),
                _ => Style::new(),
            };
            cells.push(Cell::from(Span::styled(
                doing_cell(m, now, self.doing_w),
                style,
            )));
        }
        if self.cost {
            cells.push(Cell::from(cost_cell(m)));
        }
        if self.context {
            cells.push(Cell::from(context_cell(m)));
        }
        if self.branch {
            cells.push(Cell::from(cut_front(
                &branch_cell(m),
                usize::from(self.branch_w),
            )));
        }
        let unread = if m.unread > 0 {
            Span::styled(m.unread.to_string(), t.bold())
        } else {
            Span::styled("0", t.dim())
        };
        cells.extend([
            Cell::from(unread),
            Cell::from(format!("{}/{}", m.tasks_in_progress, m.tasks_owned)),
            Cell::from(age_at(now, m.last_event_at.as_deref())),
        ]);
        if self.alive {
            cells.push(Cell::from(match m.process_alive {
                Some(true) => Span::styled("yes", t.fg(Color::Green)),
                Some(false) => Span::styled("no", t.fg(Color::Red)),
                None => Span::styled("-", t.dim()),
            }));
        }
        Row::new(cells)
    }
}

pub(super) fn members(f: &mut Frame, app: &App, t: &Theme, area: Rect, now: DateTime<Utc>) {
    let v = &app.view;
    let focused = app.focus == Pane::Members;
    let block = pane(t, format!(" Members ({}) ", v.members.len()), focused);
    let cols = Columns::plan(&v.members, area.width);
    let rows = v.members.iter().map(|m| cols.row(m, t, now));
    let selected = if focused {
        Style::new().add_modifier(Modifier::REVERSED)
    } else {
        Style::new().add_modifier(Modifier::BOLD)
    };
    let table = Table::new(rows, cols.widths.clone())
        .header(Row::new(cols.head.clone()).style(t.dim()))
        .column_spacing(1)
        .row_highlight_style(selected)
        .highlight_symbol("› ")
        .highlight_spacing(HighlightSpacing::Always)
        .block(block);
    let mut state = ratatui::widgets::TableState::default().with_selected(app.member_index());
    f.render_stateful_widget(table, area, &mut state);
}

#[cfg(test)]
mod tests {
    use crate::cli::tui::fixture::{app, now};
    use crate::cli::tui::frame_text;

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
}
