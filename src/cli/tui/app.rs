//! The live view's state and what each key does; no terminal here, so it is tested directly.

use std::collections::VecDeque;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use teamctl::observe::log::LogLine;
use teamctl::observe::timeline::Timeline;
use teamctl::observe::top::View;

/// The panes `Tab` moves between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pane {
    Members,
    Tasks,
    Requests,
    Messages,
}

/// A one-line text input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Input {
    pub(crate) text: String,
    /// In characters.
    pub(crate) cursor: usize,
}

impl Input {
    fn byte(&self, char_index: usize) -> usize {
        self.text
            .char_indices()
            .nth(char_index)
            .map_or(self.text.len(), |(i, _)| i)
    }

    fn insert(&mut self, s: &str) {
        let at = self.byte(self.cursor);
        self.text.insert_str(at, s);
        self.cursor += s.chars().count();
    }

    /// Edits for `key`; `false` when the key is not an edit.
    fn edit(&mut self, key: &KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let len = self.text.chars().count();
        match key.code {
            KeyCode::Char('u') if ctrl => {
                let at = self.byte(self.cursor);
                self.text.drain(..at);
                self.cursor = 0;
            }
            KeyCode::Char('w') if ctrl => {
                let chars: Vec<char> = self.text.chars().collect();
                let mut start = self.cursor;
                while start > 0 && chars[start - 1].is_whitespace() {
                    start -= 1;
                }
                while start > 0 && !chars[start - 1].is_whitespace() {
                    start -= 1;
                }
                let (a, b) = (self.byte(start), self.byte(self.cursor));
                self.text.drain(a..b);
                self.cursor = start;
            }
            KeyCode::Char('a') if ctrl => self.cursor = 0,
            KeyCode::Char('e') if ctrl => self.cursor = len,
            KeyCode::Char(c) if !ctrl => self.insert(c.encode_utf8(&mut [0; 4])),
            KeyCode::Backspace if self.cursor > 0 => {
                let at = self.byte(self.cursor - 1);
                self.text.remove(at);
                self.cursor -= 1;
            }
            KeyCode::Delete if self.cursor < len => {
                let at = self.byte(self.cursor);
                self.text.remove(at);
            }
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => self.cursor = (self.cursor + 1).min(len),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = len,
            KeyCode::Backspace | KeyCode::Delete => {}
            _ => return false,
        }
        true
    }
}

/// An answer to a request, being confirmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    pub(crate) id: String,
    pub(crate) from: String,
    pub(crate) summary: String,
    pub(crate) approve: bool,
    /// Why (a denial).
    pub(crate) reason: String,
}

/// What the screen is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    Normal,
    Help,
    /// A member's story (its transcript, as `teamctl log --follow`), `scroll` lines up from
    /// the newest.
    Story {
        member: String,
        scroll: usize,
    },
    /// A member's inbox, `scroll` lines up from the newest.
    Inbox {
        member: String,
        scroll: usize,
    },
    /// One request in full.
    Request {
        id: String,
        scroll: usize,
    },
    /// Typing a message to `to`.
    Compose {
        to: String,
        input: Input,
    },
    /// Typing why a request is denied.
    Reason {
        answer: Answer,
        input: Input,
    },
    /// Waiting for `y`.
    Confirm(Answer),
}

/// What the event loop must do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Effect {
    None,
    Quit,
    Send { to: String, text: String },
    Answer(Answer),
}

/// One line of news in the footer, until the next key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Notice {
    pub(crate) text: String,
    pub(crate) error: bool,
}

/// A member's story as read so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Story {
    pub(crate) member: String,
    /// The newest events, oldest first.
    pub(crate) lines: VecDeque<LogLine>,
    /// Why it cannot be shown (not a member of the config).
    pub(crate) error: Option<String>,
    /// What reading it skipped (a transcript that is a symlink, …).
    pub(crate) warnings: Vec<String>,
    /// How many transcript files it has.
    pub(crate) files: usize,
}

/// The whole state of the screen.
pub(crate) struct App {
    pub(crate) view: View,
    pub(crate) timeline: Timeline,
    /// Who `m` writes as.
    pub(crate) identity: String,
    /// Why answering is refused here (a team teamctl does not lead), if it is.
    pub(crate) refusal: Option<String>,
    pub(crate) focus: Pane,
    /// The selected member, by name (it survives a refresh that reorders rows).
    pub(crate) member: Option<String>,
    /// The selected request, by id.
    pub(crate) request: Option<String>,
    pub(crate) tasks_scroll: usize,
    /// Lines up from the newest message.
    pub(crate) messages_scroll: usize,
    pub(crate) mode: Mode,
    pub(crate) notice: Option<Notice>,
    /// An action in progress (`sending to alice…`).
    pub(crate) busy: Option<String>,
    /// Why the team cannot be read right now (its folder is gone).
    pub(crate) trouble: Option<String>,
    pub(crate) colors: bool,
    /// The story shown in [`Mode::Story`] (the event loop reads it).
    pub(crate) story: Option<Story>,
    /// The view [`Mode::Help`] was opened over (a story, an inbox): shown again when it closes.
    pub(crate) help_over: Option<Mode>,
}

impl App {
    pub(crate) fn new(view: View, timeline: Timeline, identity: String, colors: bool) -> App {
        let mut app = App {
            view,
            timeline,
            identity,
            refusal: None,
            focus: Pane::Members,
            member: None,
            request: None,
            tasks_scroll: 0,
            messages_scroll: 0,
            mode: Mode::Normal,
            notice: None,
            busy: None,
            trouble: None,
            colors,
            story: None,
            help_over: None,
        };
        app.set_view(app.view.clone());
        app
    }

    /// The view under the screen's overlays: the story or inbox the help was opened over.
    pub(crate) fn beneath(&self) -> &Mode {
        match (&self.mode, &self.help_over) {
            (Mode::Help, Some(under)) => under,
            (mode, _) => mode,
        }
    }

    /// Takes a new view, keeping the selections where they still exist.
    pub(crate) fn set_view(&mut self, view: View) {
        self.view = view;
        let names = &self.view.members;
        if !self
            .member
            .as_ref()
            .is_some_and(|m| names.iter().any(|r| &r.name == m))
        {
            self.member = names.first().map(|r| r.name.clone());
        }
        let reqs = &self.view.requests;
        if !self
            .request
            .as_ref()
            .is_some_and(|id| reqs.iter().any(|r| &r.request_id == id))
        {
            self.request = reqs.first().map(|r| r.request_id.clone());
        }
        if reqs.is_empty() && self.focus == Pane::Requests {
            self.focus = Pane::Members;
        }
    }

    pub(crate) fn member_index(&self) -> Option<usize> {
        let m = self.member.as_ref()?;
        self.view.members.iter().position(|r| &r.name == m)
    }

    pub(crate) fn request_index(&self) -> Option<usize> {
        let id = self.request.as_ref()?;
        self.view.requests.iter().position(|r| &r.request_id == id)
    }

    fn panes(&self) -> Vec<Pane> {
        let mut p = vec![Pane::Members, Pane::Tasks];
        if !self.view.requests.is_empty() {
            p.push(Pane::Requests);
        }
        p.push(Pane::Messages);
        p
    }

    fn cycle(&mut self, forward: bool) {
        let panes = self.panes();
        let i = panes.iter().position(|p| *p == self.focus).unwrap_or(0);
        let n = panes.len();
        self.focus = panes[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }];
    }

    /// Moves the focused pane's selection or scroll by `delta` rows (down is positive).
    fn step(&mut self, delta: isize) {
        let moved = |i: usize, len: usize| -> usize {
            (i as isize + delta).clamp(0, len.saturating_sub(1) as isize) as usize
        };
        match self.focus {
            Pane::Members => {
                let len = self.view.members.len();
                let i = moved(self.member_index().unwrap_or(0), len);
                self.member = self.view.members.get(i).map(|r| r.name.clone());
            }
            Pane::Requests => {
                let len = self.view.requests.len();
                let i = moved(self.request_index().unwrap_or(0), len);
                self.request = self.view.requests.get(i).map(|r| r.request_id.clone());
            }
            Pane::Tasks => {
                self.tasks_scroll = (self.tasks_scroll as isize + delta).max(0) as usize;
            }
            // Up is older: the scroll counts lines up from the newest.
            Pane::Messages => {
                self.messages_scroll = (self.messages_scroll as isize - delta).max(0) as usize;
            }
        }
    }

    /// Text pasted into an input (bracketed paste); line breaks become spaces, the input being
    /// one line.
    pub(crate) fn paste(&mut self, text: &str) {
        let flat: String = text
            .chars()
            .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
            .collect();
        match &mut self.mode {
            Mode::Compose { input, .. } | Mode::Reason { input, .. } => input.insert(&flat),
            _ => {}
        }
    }

    /// What `key` does.
    pub(crate) fn key(&mut self, key: KeyEvent) -> Effect {
        if key.kind == KeyEventKind::Release {
            return Effect::None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return Effect::Quit;
        }
        self.notice = None;
        let mode = std::mem::replace(&mut self.mode, Mode::Normal);
        match mode {
            Mode::Normal => self.normal(key),
            Mode::Help => match key.code {
                KeyCode::Char('q') => Effect::Quit,
                _ => {
                    self.mode = self.help_over.take().unwrap_or(Mode::Normal);
                    Effect::None
                }
            },
            Mode::Story { .. } | Mode::Inbox { .. }
                if matches!(key.code, KeyCode::Char('?') | KeyCode::F(1)) =>
            {
                self.help_over = Some(mode);
                self.mode = Mode::Help;
                Effect::None
            }
            Mode::Story { member, scroll } => self.member_view(key, member, scroll, true),
            Mode::Inbox { member, scroll } => self.member_view(key, member, scroll, false),
            Mode::Request { id, scroll } => self.request_key(key, id, scroll),
            Mode::Compose { to, input } => self.compose_key(key, to, input),
            Mode::Reason { answer, input } => self.reason_key(key, answer, input),
            Mode::Confirm(answer) => match key.code {
                KeyCode::Char('y' | 'Y') => Effect::Answer(answer),
                _ => {
                    self.say("not answered", false);
                    Effect::None
                }
            },
        }
    }

    /// A key in a member's story (`story`) or inbox: back, quit, a message to it, the other
    /// view of it, or a scroll.
    fn member_view(&mut self, key: KeyEvent, member: String, scroll: usize, story: bool) -> Effect {
        let scroll = match key.code {
            KeyCode::Esc | KeyCode::Enter | KeyCode::Backspace => return Effect::None,
            KeyCode::Char('q') => return Effect::Quit,
            KeyCode::Char('m') => {
                self.mode = Mode::Compose {
                    to: member,
                    input: Input::default(),
                };
                return Effect::None;
            }
            KeyCode::Char('i') if story => {
                self.mode = Mode::Inbox { member, scroll: 0 };
                return Effect::None;
            }
            KeyCode::Char('l') if !story => {
                self.mode = Mode::Story { member, scroll: 0 };
                return Effect::None;
            }
            code => scrolled(scroll, code),
        };
        self.mode = if story {
            Mode::Story { member, scroll }
        } else {
            Mode::Inbox { member, scroll }
        };
        Effect::None
    }

    /// A key in a request's detail: back, quit, approve or deny it, or a scroll.
    fn request_key(&mut self, key: KeyEvent, id: String, scroll: usize) -> Effect {
        match key.code {
            KeyCode::Esc | KeyCode::Enter | KeyCode::Backspace => Effect::None,
            KeyCode::Char('q') => Effect::Quit,
            KeyCode::Char(c @ ('a' | 'd')) => {
                self.request = Some(id);
                self.answer(c == 'a');
                Effect::None
            }
            code => {
                // The detail reads from the top: up is back, the scroll counts down.
                let scroll = match code {
                    KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
                    KeyCode::Down | KeyCode::Char('j') => scroll + 1,
                    KeyCode::PageUp => scroll.saturating_sub(10),
                    KeyCode::PageDown | KeyCode::Char(' ') => scroll + 10,
                    KeyCode::Home | KeyCode::Char('g') => 0,
                    _ => scroll,
                };
                self.mode = Mode::Request { id, scroll };
                Effect::None
            }
        }
    }

    /// A key while a message to `to` is typed: cancel, send, or an edit.
    fn compose_key(&mut self, key: KeyEvent, to: String, mut input: Input) -> Effect {
        match key.code {
            KeyCode::Esc => {
                self.say("not sent", false);
                Effect::None
            }
            KeyCode::Enter if input.text.trim().is_empty() => {
                self.mode = Mode::Compose { to, input };
                Effect::None
            }
            KeyCode::Enter => Effect::Send {
                to,
                text: input.text,
            },
            _ => {
                input.edit(&key);
                self.mode = Mode::Compose { to, input };
                Effect::None
            }
        }
    }

    /// A key while the reason of a denial is typed: cancel, on to the confirmation, or an edit.
    fn reason_key(&mut self, key: KeyEvent, mut answer: Answer, mut input: Input) -> Effect {
        match key.code {
            KeyCode::Esc => {
                self.say("not answered", false);
                Effect::None
            }
            KeyCode::Enter => {
                let reason = input.text.trim();
                answer.reason = if reason.is_empty() {
                    format!("denied by {} in teamctl top", self.identity)
                } else {
                    reason.to_string()
                };
                self.mode = Mode::Confirm(answer);
                Effect::None
            }
            _ => {
                input.edit(&key);
                self.mode = Mode::Reason { answer, input };
                Effect::None
            }
        }
    }

    fn normal(&mut self, key: KeyEvent) -> Effect {
        match key.code {
            KeyCode::Char('q') => return Effect::Quit,
            KeyCode::Char('?') | KeyCode::F(1) => self.mode = Mode::Help,
            KeyCode::Tab => self.cycle(true),
            KeyCode::BackTab => self.cycle(false),
            KeyCode::Up | KeyCode::Char('k') => self.step(-1),
            KeyCode::Down | KeyCode::Char('j') => self.step(1),
            KeyCode::PageUp => self.step(-10),
            KeyCode::PageDown => self.step(10),
            KeyCode::Home | KeyCode::Char('g') => self.step(-10_000),
            KeyCode::End | KeyCode::Char('G') => self.step(10_000),
            KeyCode::Enter if self.focus == Pane::Requests => match &self.request {
                Some(id) => {
                    self.mode = Mode::Request {
                        id: id.clone(),
                        scroll: 0,
                    }
                }
                None => self.say("no request is waiting", true),
            },
            KeyCode::Enter => match &self.member {
                Some(m) => {
                    self.mode = Mode::Story {
                        member: m.clone(),
                        scroll: 0,
                    }
                }
                None => self.say("no member to open", true),
            },
            KeyCode::Char('i') => match &self.member {
                Some(m) => {
                    self.mode = Mode::Inbox {
                        member: m.clone(),
                        scroll: 0,
                    }
                }
                None => self.say("no member to open", true),
            },
            KeyCode::Char('m') => match &self.member {
                Some(m) => {
                    self.mode = Mode::Compose {
                        to: m.clone(),
                        input: Input::default(),
                    }
                }
                None => self.say("no member to write to", true),
            },
            KeyCode::Char(c @ ('a' | 'd')) => self.answer(c == 'a'),
            _ => {}
        }
        Effect::None
    }

    /// Starts approving or denying the selected request.
    fn answer(&mut self, approve: bool) {
        if let Some(why) = &self.refusal {
            let why = why.clone();
            return self.say(&why, true);
        }
        if self.busy.is_some() {
            return self.say("wait: the last action has not finished", true);
        }
        let Some(r) = self.request_index().map(|i| &self.view.requests[i]) else {
            return self.say("no request is waiting", true);
        };
        let answer = Answer {
            id: r.request_id.clone(),
            from: r.from.clone(),
            summary: r.summary.clone(),
            approve,
            reason: String::new(),
        };
        self.mode = if approve {
            Mode::Confirm(answer)
        } else {
            Mode::Reason {
                answer,
                input: Input::default(),
            }
        };
    }

    pub(crate) fn say(&mut self, text: &str, error: bool) {
        self.notice = Some(Notice {
            text: text.to_string(),
            error,
        });
    }
}

/// A scroll counted in lines up from the bottom, after `code`.
fn scrolled(scroll: usize, code: KeyCode) -> usize {
    match code {
        KeyCode::Up | KeyCode::Char('k') => scroll + 1,
        KeyCode::Down | KeyCode::Char('j') => scroll.saturating_sub(1),
        KeyCode::PageUp => scroll + 10,
        KeyCode::PageDown | KeyCode::Char(' ') => scroll.saturating_sub(10),
        KeyCode::Home | KeyCode::Char('g') => usize::MAX / 2,
        KeyCode::End | KeyCode::Char('G') => 0,
        _ => scroll,
    }
}
