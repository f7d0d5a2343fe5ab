//! A run's lead at a permission prompt (`run --bridge`): the prompt is posted with a one-time
//! code like a request, and `approve <code>` / `deny <code> [reason]` under the same rules
//! (the chat, the allowed users, the time, one use, `--ttl`) leaves a verdict for the run to
//! type into the lead's pane. Nothing is written to a team's files here. A prompt's code is
//! journaled without a request id, so a restarted bridge never takes it back as open.

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::code::Code;
use super::hear::{Heard, Incoming};
use super::journal::What;
use super::out::Outgoing;
use super::render::{self, Post};
use super::state::{Bridge, Scope};
use crate::store::paths::TeamName;
use crate::team::protocol::Verdict;
use crate::time::iso_millis;

/// What a prompt's journal lines carry in `detail` (and `member`).
const PROMPT: &str = "permission prompt";
const LEAD: &str = "team-lead";

impl Bridge {
    /// Serves `team`, the team a run's lead formed (with [`Scope::Run`]; nothing otherwise).
    pub fn serve(&mut self, team: TeamName) {
        if matches!(self.scope, Scope::Run(_)) {
            self.scope = Scope::Run(Some(team));
        }
    }

    /// The team a prompt is posted for: the run's team, once known.
    fn prompt_team(&self) -> String {
        match &self.scope {
            Scope::Run(Some(t)) | Scope::One(t) => t.to_string(),
            _ => "run".into(),
        }
    }

    /// The post of the lead's permission prompt showing `screen`, with a fresh code (which
    /// replaces any code of an earlier prompt). Journal it with [`Bridge::posted`] once posted.
    ///
    /// # Errors
    /// No random code could be drawn.
    pub fn ask_prompt(&mut self, screen: &str, now: DateTime<Utc>) -> Result<Outgoing> {
        let code = Code::random()?;
        let expires = now + self.s.ttl;
        let mut record = self.record(What::Posted, now);
        record.team = Some(self.prompt_team());
        record.member = Some(LEAD.into());
        record.code = Some(code.to_string());
        record.expires_at = Some(iso_millis(expires));
        record.detail = Some(PROMPT.into());
        self.prompt = Some((code.clone(), expires));
        self.verdict = None;
        Ok(Outgoing {
            post: render::prompt(&self.prompt_team(), screen, &code),
            record,
        })
    }

    /// The prompt left the screen without an answer from the chat: its code is retired;
    /// returns the notice to post (`None` when no prompt was open).
    ///
    /// # Errors
    /// The journal could not be written.
    pub fn withdraw_prompt(&mut self, now: DateTime<Utc>) -> Result<Option<Post>> {
        let Some((code, _)) = self.prompt.take() else {
            return Ok(None);
        };
        let mut r = self.record(What::Closed, now);
        r.team = Some(self.prompt_team());
        r.member = Some(LEAD.into());
        r.code = Some(code.to_string());
        r.detail = Some(PROMPT.into());
        self.commit(&r)?;
        Ok(Some(render::prompt_gone(&self.prompt_team(), &code)))
    }

    /// Whether the prompt's code has expired unanswered (then it is retired: ask again).
    pub fn prompt_expired(&self, now: DateTime<Utc>) -> bool {
        self.prompt.as_ref().is_some_and(|(_, e)| *e <= now)
    }

    /// The answer given to the prompt, taken once.
    pub fn take_verdict(&mut self) -> Option<Verdict> {
        self.verdict.take()
    }

    /// `approve`/`deny` of the prompt's code (`deny` is `Some(reason)`), by an allowed user in
    /// the chat (checked by [`Bridge::hear`]).
    pub(super) fn answer_prompt(
        &mut self,
        m: &Incoming,
        code: &Code,
        deny: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<Heard> {
        let mut r = self.record(What::Refused, now);
        r.team = Some(self.prompt_team());
        r.member = Some(LEAD.into());
        r.user = Some(m.user.clone());
        r.code = Some(code.to_string());
        if self.prompt_expired(now) {
            r.detail = Some("code expired".into());
            let reply = Post::say(format!("code {code} expired; a new code follows"));
            return self.keep(r, Some(reply));
        }
        self.prompt = None;
        let (what, verdict, word) = match deny {
            None => (
                What::Approved,
                Verdict::Approve {
                    feedback: None,
                    mode: None,
                },
                "approved",
            ),
            Some(reason) => (What::Denied, Verdict::Deny { reason }, "denied"),
        };
        r.event = what;
        r.detail = Some(match &verdict {
            Verdict::Deny { reason } => reason.clone(),
            Verdict::Approve { .. } => PROMPT.into(),
        });
        self.verdict = Some(verdict);
        let reply = Post::say(format!(
            "[{}] {word}: the lead's permission prompt is answered in its pane",
            self.prompt_team()
        ));
        self.keep(r, Some(reply))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::ops::chat::{Ground, Settings};
    use crate::store::lock::LockOptions;
    use crate::store::paths::Layout;
    use crate::team::records::Records;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn run_bridge(dir: &std::path::Path) -> Bridge {
        let s = Settings {
            transport: "telegram",
            chat: "42".into(),
            allow: vec!["7".into()],
            ttl: Duration::from_secs(60),
            started: at("2026-12-03T10:00:00Z"),
            force: true,
        };
        let ground = Ground {
            layout: Layout::new(dir.join("claude")),
            records: Records::in_dir(Some(&dir.join("data"))),
            lock: LockOptions::default(),
        };
        Bridge::new(s, Scope::Run(None), ground).unwrap().0
    }

    fn said(user: &str, text: &str) -> Incoming {
        Incoming {
            user: user.into(),
            chat: "42".into(),
            at: None,
            text: text.into(),
        }
    }

    #[test]
    fn a_prompts_code_answers_once_and_only_until_it_expires() {
        let dir = tempfile::tempdir().unwrap();
        let mut b = run_bridge(dir.path());
        let now = at("2026-12-03T10:00:10Z");
        let out = b
            .ask_prompt("Do you want to proceed?\n❯ 1. Yes", now)
            .unwrap();
        b.posted(&out).unwrap();
        let code = out.post.code.clone().unwrap();
        // A stranger's approve is refused; nothing is decided.
        b.hear(&said("8", &format!("approve {code}")), now).unwrap();
        assert_eq!(b.take_verdict(), None);
        // Past --ttl: refused, and the prompt is to be asked again.
        let late = now + chrono::Duration::seconds(61);
        assert!(b.prompt_expired(late));
        let h = b
            .hear(&said("7", &format!("approve {code}")), late)
            .unwrap();
        assert_eq!(h.record.unwrap().detail.as_deref(), Some("code expired"));
        assert_eq!(b.take_verdict(), None);
        // A new code: the allowed user's deny is the verdict, once.
        let out = b.ask_prompt("Do you want to proceed?", late).unwrap();
        b.posted(&out).unwrap();
        let code = out.post.code.clone().unwrap();
        b.hear(&said("7", &format!("deny {code} use a branch")), late)
            .unwrap();
        assert_eq!(
            b.take_verdict(),
            Some(Verdict::Deny {
                reason: "use a branch".into()
            })
        );
        assert_eq!(b.take_verdict(), None);
        let again = b
            .hear(&said("7", &format!("approve {code}")), late)
            .unwrap();
        assert_eq!(
            again.record.unwrap().detail.as_deref(),
            Some("code already used or retired")
        );
        assert_eq!(b.take_verdict(), None);
        assert!(b.withdraw_prompt(late).unwrap().is_none());
    }
}
