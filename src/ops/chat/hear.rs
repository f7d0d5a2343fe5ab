//! What the bridge does with a chat message: only the configured chat counts, only messages
//! sent since the bridge started, only the allowed users; then `approve`/`deny` a code through
//! the same locked path as `teamctl approve`/`deny` ([`protocol::answer`]), `say` through the
//! same send as `teamctl send` ([`mailbox::send`]), and `status`. Every decision on a command
//! of an allowed user, and every refusal, is journaled.

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::code::Code;
use super::command::{self, Command, NotCommand, Say};
use super::journal::{Record, What};
use super::render::{self, Post};
use super::state::{Bridge, lead_of};
use crate::store::paths::{MemberName, TeamName};
use crate::team::mailbox::{self, SendRequest, Text, Writing};
use crate::team::protocol::{self, Verdict};

/// A message from the chat, as its transport read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incoming {
    /// The sender's user id.
    pub user: String,
    /// The chat or channel it was sent in.
    pub chat: String,
    /// When it was sent (`None`: a button press, which carries no time of its own).
    pub at: Option<DateTime<Utc>>,
    /// Its text (or a button's data).
    pub text: String,
}

/// What hearing a message did: the journal line written (if any) and the reply to post.
#[derive(Debug, Clone, Default)]
pub struct Heard {
    /// What was journaled.
    pub record: Option<Record>,
    /// What to answer in the chat.
    pub reply: Option<Post>,
}

impl Bridge {
    /// Hears `m` at `now` (see the module docs).
    ///
    /// # Errors
    /// The journal could not be written (after an answer was written: the answer stands).
    pub fn hear(&mut self, m: &Incoming, now: DateTime<Utc>) -> Result<Heard> {
        // In whole seconds: Telegram dates a message to its second, so one sent in the second
        // the bridge started is not older than the bridge.
        if m.at
            .is_some_and(|at| at.timestamp() < self.s.started.timestamp())
        {
            return Ok(Heard::default());
        }
        let refuse = |b: &Bridge, why: &str| {
            let mut r = b.record(What::Refused, now);
            r.user = Some(m.user.clone());
            r.chat = m.chat.clone();
            r.detail = Some(why.to_string());
            r
        };
        // Strangers and other chats get no answer at all; only what they tried to run is kept.
        let cmd = match command::parse(&m.text) {
            Err(NotCommand::Other) => return Ok(Heard::default()),
            other => other,
        };
        if m.chat != self.s.chat {
            return self.keep(refuse(self, "another chat"), None);
        }
        if !self.s.allow.contains(&m.user) {
            return self.keep(refuse(self, "user not allowed"), None);
        }
        match cmd {
            Err(NotCommand::Bad(why)) => Ok(Heard {
                record: None,
                reply: Some(Post::say(why)),
            }),
            Err(NotCommand::Other) => Ok(Heard::default()),
            Ok(Command::Approve(code)) => self.answer(m, &code, None, now),
            Ok(Command::Deny(code, reason)) => {
                let reason = reason.unwrap_or_else(|| {
                    format!("denied from {} by the person answering", self.s.transport)
                });
                self.answer(m, &code, Some(reason), now)
            }
            Ok(Command::Say(say)) => self.say(m, say, now),
            Ok(Command::Status) => {
                let mut r = self.record(What::Status, now);
                r.user = Some(m.user.clone());
                let reply = self.status(now);
                self.keep(r, Some(reply))
            }
        }
    }

    /// Journals `r` and returns it with `reply`.
    pub(super) fn keep(&mut self, r: Record, reply: Option<Post>) -> Result<Heard> {
        self.commit(&r)?;
        Ok(Heard {
            record: Some(r),
            reply,
        })
    }

    /// `approve <code>` (`deny` is `Some(reason)`).
    fn answer(
        &mut self,
        m: &Incoming,
        code: &Code,
        deny: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<Heard> {
        let refused = |b: &Bridge, why: &str| {
            let mut r = b.record(What::Refused, now);
            r.user = Some(m.user.clone());
            r.code = Some(code.to_string());
            r.detail = Some(why.to_string());
            r
        };
        if self.prompt.as_ref().is_some_and(|(c, _)| c == code) {
            return self.answer_prompt(m, code, deny, now);
        }
        let Some(open) = self.open.get(code).cloned() else {
            let why = if self.spent.contains(code.as_str()) {
                "code already used or retired"
            } else {
                "unknown code"
            };
            let reply = Post::say(format!("{why}: {code} answers nothing"));
            return self.keep(refused(self, why), Some(reply));
        };
        if open.expires <= now {
            let reply = Post::say(format!("code {code} expired; a new code follows"));
            return self.keep(refused(self, "code expired"), Some(reply));
        }
        let approve = deny.is_none();
        let verdict = match deny.clone() {
            None => Verdict::Approve {
                feedback: None,
                mode: None,
            },
            Some(reason) => Verdict::Deny { reason },
        };
        let written = self.open_team(&open.team).and_then(|team| {
            let lead = lead_of(&team)?;
            let g = &self.ground;
            let w = Writing {
                now,
                lock: &g.lock,
                log: g.records.sent_log(),
            };
            protocol::answer(&team, &lead, &open.request_id, &verdict, w)
        });
        let (request, _frame, _delivery) = match written {
            Ok(w) => w,
            Err(e) => {
                // Answered meanwhile (at a terminal, by a policy): the code is retired; any
                // other failure leaves it open to try again.
                let gone = self.pending_now(&open.team, &open.request_id, now) == Some(false);
                let what = if gone { What::Closed } else { What::Refused };
                let mut r = self.code_record(what, code, &open, now);
                r.user = Some(m.user.clone());
                r.detail = Some(format!("{e:#}"));
                let reply = Post {
                    parts: vec![
                        render::Part::Ours("could not answer: ".into()),
                        render::Part::Theirs(render::visible(&self.for_chat(&e), false, 300)),
                    ],
                    code: None,
                };
                return self.keep(r, Some(reply));
            }
        };
        let what = if approve {
            What::Approved
        } else {
            What::Denied
        };
        let mut r = self.code_record(what, code, &open, now);
        r.user = Some(m.user.clone());
        r.detail = deny;
        let reply = render::answered(open.team.as_str(), approve, &request);
        self.keep(r, Some(reply))
    }

    /// An error as the chat is told it: the config dir and teamctl's data dir named, not
    /// spelled out, so the chat service never learns this machine's folders (the journal and
    /// stderr keep the whole text).
    fn for_chat(&self, e: &anyhow::Error) -> String {
        let mut text = format!("{e:#}");
        let g = &self.ground;
        let mut dirs: Vec<(String, &str)> = [
            (Some(g.layout.root()), "<config dir>"),
            (g.records.data_dir(), "<data dir>"),
        ]
        .into_iter()
        .filter_map(|(dir, name)| Some((dir?.display().to_string(), name)))
        .filter(|(dir, _)| dir.trim_end_matches('/').len() > 1)
        .collect();
        // The longer first: one of the folders may be inside the other.
        dirs.sort_by_key(|(dir, _)| std::cmp::Reverse(dir.len()));
        for (dir, name) in dirs {
            text = text.replace(dir.trim_end_matches('/'), name);
        }
        text
    }

    /// `say [team/]member text`.
    fn say(&mut self, m: &Incoming, say: Say, now: DateTime<Utc>) -> Result<Heard> {
        let Say { team, member, text } = say;
        let (team, member) = (team.as_deref(), member.as_str());
        let mut r = self.record(What::Said, now);
        r.user = Some(m.user.clone());
        r.member = Some(member.to_string());
        r.detail = Some(text.clone());
        let name = match (team, self.teams.keys().collect::<Vec<_>>().as_slice()) {
            (Some(t), _) => TeamName::parse(t).ok(),
            (None, [only]) => Some((*only).clone()),
            (None, _) => None,
        };
        let Some(name) = name.filter(|n| self.teams.contains_key(n)) else {
            r.event = What::Refused;
            r.detail = Some("no such team served here (say team/member text)".into());
            let reply = Post::say("name a team this bridge serves: say team/member text");
            return self.keep(r, Some(reply));
        };
        r.team = Some(name.to_string());
        let sent = self.open_team(&name).and_then(|t| {
            let req = SendRequest {
                to: MemberName::parse(member)?,
                from: MemberName::parse(t.default_identity())?,
                text: Text::plain(text)?,
                summary: None,
                color: None,
                force: false,
                idempotency_key: None,
            };
            let g = &self.ground;
            mailbox::send(&t, &req, now, &g.lock, g.records.sent_log())
        });
        let reply = match sent {
            Ok(d) => render::said(name.as_str(), &d.to),
            Err(e) => {
                r.event = What::Refused;
                r.detail = Some(format!("{e:#}"));
                Post {
                    parts: vec![
                        render::Part::Ours("not sent: ".into()),
                        render::Part::Theirs(render::visible(&self.for_chat(&e), false, 300)),
                    ],
                    code: None,
                }
            }
        };
        self.keep(r, Some(reply))
    }

    /// The `status` reply: each team's members and states, and its open codes.
    fn status(&mut self, now: DateTime<Utc>) -> Post {
        let mut posts = Vec::new();
        let names: Vec<TeamName> = self.teams.keys().cloned().collect();
        for name in names {
            let open: Vec<(Code, String)> = self
                .open
                .iter()
                .filter(|(_, o)| o.team == name && o.expires > now)
                .map(|(c, o)| (c.clone(), o.request_id.clone()))
                .collect();
            let Some(reader) = self.teams.get_mut(&name) else {
                continue;
            };
            let members = match reader.read(now) {
                Ok(p) => p
                    .status
                    .members
                    .iter()
                    .map(|m| (m.name.clone(), m.state.to_string()))
                    .collect(),
                Err(_) => Vec::new(),
            };
            posts.push(render::status_line(name.as_str(), &members, &open));
        }
        if posts.is_empty() {
            return Post::say("no team is served right now");
        }
        render::join(posts)
    }
}
