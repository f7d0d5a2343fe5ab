//! A request in full: who asks what, its description, input, host or plan.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::requests::kind_label;
use super::screen::Screen;
use super::theme::{esc, pane, scrolled_lines};
use super::words::{age_at, wrap};

pub(super) fn request(f: &mut Frame, on: &Screen, area: Rect, id: &str, scroll: usize) {
    let (app, t, now) = (on.app, on.t, on.now);
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
                Span::raw(format!(", asked {} ago", age_at(now, Some(r.at.as_str())))),
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
